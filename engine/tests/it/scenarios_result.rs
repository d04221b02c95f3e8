//! The result of a run of scenarios, end to end: `loadgate run --out` on a spec of two
//! scenarios (`browse` from 0 s for 3 s, `buy` from 1 s for 2 s; closed models, whose health
//! a loaded machine does not spoil) against `loadgate serve` on loopback. The whole run is the exact sum of its scenarios, on one clock; tagged and
//! scenario thresholds are judged on what they select; a failed `warn` threshold does not fail
//! the run, a failed `fail` one does (exit 1).

use std::path::Path;
use std::process::Output;

use loadgate::result::RunResult;

use crate::support::{loadgate, turn};

/// The spec of the two scenarios against `url`, with `extra` appended to its whole-run `slo`.
fn spec(url: &str, extra: &str) -> String {
    format!(
        "version: 1\nname: scenarios-result\ndefaults:\n  base_url: {url}\n\
         targets:\n\
         \x20 - {{ name: list, path: '/items?delay=2ms', tags: {{ kind: read }} }}\n\
         \x20 - {{ name: item, path: '/items/1?delay=2ms', tags: {{ kind: read }} }}\n\
         \x20 - {{ name: pay, path: '/pay?delay=5ms', tags: {{ kind: write }} }}\n\
         load:\n  threads: 1\n\
         scenarios:\n\
         \x20 - name: browse\n\
         \x20   executor: constant-vus\n\
         \x20   targets: [list, item]\n\
         \x20   vus: 2\n\
         \x20   duration: 3s\n\
         \x20 - name: buy\n\
         \x20   executor: constant-vus\n\
         \x20   targets: [pay]\n\
         \x20   vus: 2\n\
         \x20   duration: 2s\n\
         \x20   start_time: 1s\n\
         \x20   slo:\n\
         \x20     latency: ['p(95) < 5s']\n\
         slo:\n\
         \x20 latency{{kind:write}}: ['p(99) < 5s']\n\
         \x20 requests{{kind:read,scenario:buy}}: [{{ threshold: 'count > 0', severity: warn }}]\n\
         {extra}"
    )
}

/// Runs `text` as `dir/spec.yaml` with `--out`: the process's output and the result file.
fn run(dir: &Path, text: &str) -> (Output, RunResult) {
    let spec = dir.join("spec.yaml");
    let out = dir.join("result.json");
    std::fs::write(&spec, text).unwrap();
    let output = loadgate(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let result = loadgate::result::read(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    (output, result)
}

#[test]
fn a_run_of_scenarios_is_the_sum_of_its_scenarios_on_one_clock() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (output, result) = run(dir.path(), &spec(&server.url(), ""));
    assert!(
        output.status.success(),
        "{:?}: {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    let names: Vec<&str> = result.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["browse", "buy"]);
    let [browse, buy] = [&result.scenarios[0], &result.scenarios[1]];
    assert_eq!(browse.executor, "constant-vus");
    assert_eq!(buy.executor, "constant-vus");
    assert_eq!(
        (browse.targets.as_slice(), buy.targets.as_slice()),
        (
            &["list".to_string(), "item".to_string()][..],
            &["pay".to_string()][..]
        )
    );
    assert_eq!(buy.tags["scenario"], "buy");
    assert!(browse.total.responses > 0 && buy.total.responses > 0);

    // Exact sums: the whole run's requests, responses, errors and histogram.
    let total = &result.total;
    assert_eq!(
        total.responses,
        browse.total.responses + buy.total.responses
    );
    assert_eq!(total.requests, browse.total.requests + buy.total.requests);
    assert_eq!(total.errors, browse.total.errors + buy.total.errors);
    let histogram = loadgate::result::decode_histogram(&total.histogram).unwrap();
    assert_eq!(histogram.len(), total.responses);
    assert_eq!(
        total.responses,
        result.targets.iter().map(|t| t.responses).sum::<u64>()
    );

    // Targets in the spec's order, with their tags (the scenario's merged in).
    let targets: Vec<&str> = result.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(targets, ["list", "item", "pay"]);
    assert_eq!(result.targets[2].tags["kind"], "write");
    assert_eq!(result.targets[2].tags["scenario"], "buy");
    assert_eq!(result.targets[2].responses, buy.total.responses);

    // One clock: buy started a second after browse; the run spans browse's 3 s.
    assert!((buy.start_time_s - 1.0).abs() < 0.2, "{}", buy.start_time_s);
    assert!(
        (result.duration_s - 3.0).abs() < 0.3,
        "{}",
        result.duration_s
    );
    let first_second = result.targets[2].time_series.first().map(|s| s.second);
    assert_eq!(first_second, Some(1), "pay's seconds on the run's clock");

    // Verdicts: buy's own, the tagged ones; the warning selects nothing (no `read` in buy).
    let verdict = |scope: &str, threshold: &str| {
        result
            .slo
            .iter()
            .find(|v| v.scope == scope && v.threshold == threshold)
            .unwrap_or_else(|| panic!("{scope} {threshold}: {:?}", result.slo))
    };
    assert!(verdict("buy", "p(95) < 5s").passed);
    assert!(verdict("total", "p(99) < 5s").passed);
    let warning = verdict("total", "count > 0");
    assert_eq!((warning.measured, warning.passed), (None, false));
    assert!(result.passed, "a failed warning does not fail the run");
    server.shutdown();
}

#[test]
fn a_failed_tagged_threshold_fails_the_run() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let extra = "\x20 errors{kind:write}: ['count > 1000000']\n";
    let (output, result) = run(dir.path(), &spec(&server.url(), extra));
    assert_eq!(output.status.code(), Some(1), "SLOs failed: exit 1");
    let failed = result
        .slo
        .iter()
        .find(|v| v.threshold == "count > 1000000")
        .unwrap();
    assert_eq!(failed.tags["kind"], "write");
    assert_eq!(
        failed.measured,
        Some(result.targets[2].errors as f64),
        "pay's errors alone"
    );
    assert!(!result.passed);
    server.shutdown();
}

/// Flow iterations of 2 × 400 ms by 2 virtual users for 1 s: each user's second iteration
/// starts at 0.8 s and is under way at the end; with `graceful_stop` it finishes (k6's
/// `gracefulStop`) and is counted, without enough of one it is cut and is not.
#[test]
fn a_graceful_stop_lets_the_iterations_under_way_finish() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let iterations = |graceful: &str| {
        let text = format!(
            "version: 1\nname: graceful\ndefaults:\n  base_url: {}\n\
             flows:\n\
             \x20 - name: slow\n\
             \x20   steps:\n\
             \x20     - {{ name: a, path: '/a?delay=400ms' }}\n\
             \x20     - {{ name: b, path: '/b?delay=400ms' }}\n\
             scenarios:\n\
             \x20 - name: s\n\
             \x20   executor: constant-vus\n\
             \x20   flows: [slow]\n\
             \x20   vus: 2\n\
             \x20   duration: 1s\n\
             \x20   graceful_stop: {graceful}\n",
            server.url()
        );
        let (output, result) = run(dir.path(), &text);
        assert!(output.status.success(), "{output:?}");
        result.flows[0].iterations
    };
    assert_eq!(iterations("2s"), 4, "the second iterations finish");
    assert_eq!(iterations("100ms"), 2, "the second iterations are cut");
    server.shutdown();
}
