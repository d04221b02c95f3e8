//! Regression rules by tag, per plain target, and the warning tier, on real runs against the
//! built-in target (`loadgate serve`, in process) judged by `loadgate compare` as the binary.
//!
//! Two targets, `read` (tagged `kind: read`) and `write` (`kind: write`), each at its own
//! `?delay=`; three runs of 21 s (long enough to judge, `stats::MIN_SECONDS`): the baseline at
//! 4 ms each, one where only the writes take 8 ms, one where only the reads do. The rules,
//! recorded in each result as a run records its spec's: `latency{kind:write}: p(50) +10%`
//! (severity `fail`, on the sum of the targets tagged `kind: write`) and the plain target
//! `read`'s `p(50) +10%` (severity `warn`), and a selector that matches nothing.
//!
//! - Only the writes slower: the tagged rule regresses, the read target's does not; exit 4.
//! - Only the reads slower: the tagged rule does not regress; the read target's (warn) does,
//!   its verdict `regressed` with severity `warn`: a warning, exit 0.
//! - The same read rule of severity `fail`: exit 4.
//!
//! The tags and rules are set on the results as a run of a spec writing them records them
//! (`TargetResult::tags`, `RecordedRule`), so that this test judges the comparison alone.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support;
use loadgate::serve::spawn;

/// Two tagged targets against `url`, the reads at `read` and the writes at `write` (e.g.
/// `4ms`), for 21 s.
fn spec(url: &str, read: &str, write: &str) -> String {
    format!(
        "version: 1\nname: tags\ndefaults:\n  base_url: {url}\n  timeout: 5s\ntargets:\n\
         \x20 - name: read\n    path: /read?delay={read}\n    tags: {{kind: read}}\n\
         \x20 - name: write\n    path: /write?delay={write}\n    tags: {{kind: write}}\n\
         load:\n  connections: 4\n  duration: 21s\n  warmup: 1s\n"
    )
}

/// The rules: the writes by tag (`fail`), the read target (`read_severity`), and a selector
/// that matches no target.
fn rules(read_severity: &str) -> Value {
    let p50 = |scope_kind: &str, scope: &str, severity: &str, tags: Value| {
        json!({
            "scope_kind": scope_kind, "scope": scope, "metric": "latency",
            "aggregation": "p(50)", "max_change": 0.1, "floor": 1000.0, "unit": "us",
            "expression": "p(50) +10% floor 1ms", "severity": severity, "tags": tags,
        })
    };
    json!([
        p50("total", "total", "fail", json!({"kind": "write"})),
        p50("target", "read", read_severity, json!({})),
        p50("total", "total", "fail", json!({"kind": "delete"})),
    ])
}

/// A run of [`spec`] against a fresh server, as its result file holds it, its targets' tags
/// (`kind`: the target's name) set.
fn run([read, write]: [&str; 2]) -> Value {
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let run_dir = tempfile::tempdir().unwrap();
    let result = support::run_spec_text(run_dir.path(), &spec(&server.url(), read, write));
    assert!(result.total.responses > 500, "{:?}", result.total);
    let mut value = serde_json::to_value(&result).unwrap();
    for target in value["targets"].as_array_mut().unwrap() {
        let kind = target["name"].clone();
        target["tags"] = json!({ "kind": kind });
    }
    value
}

/// `value` with the rules of [`rules`] recorded, written to `dir/NAME.json`.
fn written(dir: &Path, name: &str, value: &Value, read_severity: &str) -> PathBuf {
    let mut value = value.clone();
    value["regression_rules"] = rules(read_severity);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    path
}

/// `loadgate compare BASELINE CURRENT --format json`: its exit code and verdict document.
fn compare(baseline: &Path, current: &Path) -> (i32, Value) {
    let out = support::loadgate(&[
        "compare",
        baseline.to_str().unwrap(),
        current.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    for r in verdict["rules"].as_array().unwrap() {
        eprintln!(
            "{} {} {} {}: {}",
            r["verdict"], r["scope"], r["tags"], r["severity"], r["reason"]
        );
    }
    (out.status.code().unwrap(), verdict)
}

#[test]
fn tagged_rules_judge_their_targets_and_warn_rules_never_fail() {
    let _turn = support::turn();
    let dir = tempfile::tempdir().unwrap();
    let baseline = run(["4ms", "4ms"]);
    let writes_slower = run(["4ms", "8ms"]);
    let reads_slower = run(["8ms", "4ms"]);
    let base = written(dir.path(), "baseline", &baseline, "warn");

    // Only the writes slower: the tagged rule regresses, the read target's does not.
    let current = written(dir.path(), "writes", &writes_slower, "warn");
    let (code, verdict) = compare(&base, &current);
    let rules = verdict["rules"].as_array().unwrap();
    assert_eq!(rules[0]["verdict"], "regressed", "{:#}", rules[0]);
    assert_eq!(rules[0]["tags"], json!({"kind": "write"}));
    assert_ne!(rules[1]["verdict"], "regressed", "{:#}", rules[1]);
    assert_eq!(rules[1]["scope_kind"], "target");
    assert_eq!(rules[2]["verdict"], "inconclusive");
    assert!(
        rules[2]["reason"]
            .as_str()
            .unwrap()
            .contains("carries the tags {kind:delete}: the selector matches nothing"),
        "{:#}",
        rules[2]
    );
    assert_eq!(
        verdict["family"]["tested"], 2,
        "the empty selector is not tested"
    );
    assert_eq!((code, &verdict["verdict"]), (4, &json!("regressed")));

    // Only the reads slower: the writes' rule does not regress; the read target's does, a
    // warning that does not fail the gate.
    let current = written(dir.path(), "reads", &reads_slower, "warn");
    let (code, verdict) = compare(&base, &current);
    let rules = verdict["rules"].as_array().unwrap();
    assert_ne!(rules[0]["verdict"], "regressed", "{:#}", rules[0]);
    assert_eq!(rules[1]["verdict"], "regressed", "{:#}", rules[1]);
    assert_eq!(rules[1]["severity"], "warn");
    assert_eq!((code, &verdict["verdict"]), (0, &json!("pass")));
    assert_eq!(verdict["regressed"], false);
    let summary = verdict["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("PASSED with 1 warning: ")
            && summary.contains("no regression (3 rules: 1 warning"),
        "{summary}"
    );

    // The same regression under a `fail` rule fails the gate.
    let current = written(dir.path(), "reads-fail", &reads_slower, "fail");
    let (code, verdict) = compare(&base, &current);
    assert_eq!(verdict["rules"][1]["verdict"], "regressed");
    assert_eq!(
        verdict["rules"][1].get("severity"),
        None,
        "fail is left out"
    );
    assert_eq!((code, &verdict["verdict"]), (4, &json!("regressed")));
}
