//! The console summary of `loadgate run` against the built-in target on loopback: the default
//! `errors` SLO, the extra percentiles and rates, the colour histogram and insight lines, and
//! the progress lines on stderr in a CI log.

mod support;

use std::process::Command;

use loadgate::result::RunResult;
use support::write_spec;

/// A closed-model spec of one target at `url`: `load` and `slo` are YAML lines (may be empty).
fn spec(url: &str, load: &str, slo: &str) -> String {
    format!(
        "version: 1\nname: console\ndefaults:\n  timeout: 2s\ntargets:\n  - name: t\n    url: {url}\nload:\n{load}{slo}"
    )
}

/// Runs `loadgate run SPEC --out RESULT EXTRA...` to its end (stdout and stderr are pipes, so
/// not terminals): exit code, stdout, stderr and the result read back.
fn run(yaml: &str, extra: &[&str]) -> (Option<i32>, String, String, RunResult) {
    let (dir, path) = write_spec(yaml);
    let out = dir.path().join("result.json");
    let output = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .env_remove("NO_COLOR")
        .output()
        .expect("run loadgate");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let result = loadgate::result::read(&out).unwrap_or_else(|e| panic!("{e:#}\n{stderr}"));
    (output.status.code(), stdout, stderr, result)
}

const COUNT: &str = "  connections: 2\n  requests: 50\n";

#[test]
fn a_run_in_which_every_request_failed_fails_on_the_default_errors_slo() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let failing = format!("{}/x?status=500", server.url());

    // No SLO at all: the default is the only one, and it fails.
    let (code, stdout, _, result) = run(&spec(&failing, COUNT, ""), &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(result.total.errors, 50, "{stdout}");
    assert_eq!(result.slo.len(), 1);
    let default = &result.slo[0];
    assert!(default.default && !default.passed, "{default:?}");
    assert_eq!(
        (default.metric.as_str(), default.threshold.as_str()),
        ("errors", "rate < 100%")
    );
    assert_eq!(default.measured, Some(1.0));
    assert!(
        stdout.contains(
            "FAIL  total errors: rate < 100% (default: the spec sets no errors SLO)  measured"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "FAILED: 1 of 1 SLO thresholds not met (with loadgate's default \
             `errors: rate < 100%`, NOT met: the spec sets no errors SLO)"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("PASSED"), "{stdout}");

    // A latency SLO alone is met by the 500s' latency; the default still fails the run.
    let (code, stdout, _, result) = run(
        &spec(&failing, COUNT, "slo:\n  latency: [\"p(99) < 10s\"]\n"),
        &[],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(result.slo.len(), 2);
    assert!(result.slo[0].passed && !result.slo[1].passed && result.slo[1].default);
    assert!(
        stdout.contains("FAILED: 1 of 2 SLO thresholds not met"),
        "{stdout}"
    );

    // The spec's own errors threshold replaces the default, even a lenient one.
    let (code, stdout, _, result) = run(
        &spec(&failing, COUNT, "slo:\n  errors: [\"rate <= 100%\"]\n"),
        &[],
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert!(result.slo.iter().all(|v| !v.default), "{:?}", result.slo);
    assert!(!stdout.contains("default"), "{stdout}");

    // Against a healthy target the default passes, and the verdict says it was the default.
    let ok = format!("{}/x", server.url());
    let (code, stdout, _, result) = run(&spec(&ok, COUNT, ""), &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(result.slo[0].default && result.slo[0].passed);
    assert!(
        stdout.contains(
            "PASSED: all 1 SLO thresholds met (with loadgate's default \
             `errors: rate < 100%`, met: the spec sets no errors SLO)"
        ),
        "{stdout}"
    );
}
