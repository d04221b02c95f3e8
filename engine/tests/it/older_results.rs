//! Results written by earlier loadgate versions still read, compare and report, through the
//! binary as a user runs it.
//!
//! One fixture per version: `current.json` and `baseline.json` are version 1 (`p99`,
//! `target_from`, `achieved_concurrency`), `v2-current.json` is `current.json` as this loadgate
//! writes it (version 2: `p99_us`, `level_from`, `achieved_in_flight`).
//!
//! `v1-before-health.json` is `baseline.json` as committed in 7937571, before loadgate judged
//! the load generator's health: `result_version` 1 without `health`, `load.streams`, a
//! target's `service_time_us`, `checks`, `phases_us` and `transport`, or a per-second
//! `requests`.

use crate::support;
use support::loadgate;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn fixture(name: &str) -> String {
    support::result_fixture(name).display().to_string()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const OLD: &str = "v1-before-health.json";

#[test]
fn the_fixture_is_a_v1_result_without_health() {
    let old: Value = serde_json::from_str(&std::fs::read_to_string(fixture(OLD)).unwrap()).unwrap();
    assert_eq!(old["result_version"], 1);
    assert!(old.get("health").is_none());
    assert!(old["targets"][0].get("transport").is_none());
}

#[test]
fn an_older_result_reads_as_not_judged() {
    let old = loadgate::result::read(Path::new(&fixture(OLD))).unwrap();
    assert!(old.health.valid, "nothing found wrong with an unjudged run");
    assert!(old.health.problems.is_empty());
    assert!(old.health.stages.is_empty(), "no stages: not judged");
    assert_eq!(old.load.streams, 1);
    assert_eq!(old.total.responses, 4277);
}

#[test]
fn an_older_baseline_compares_with_a_current_result() {
    let (old, current) = (fixture(OLD), fixture("current.json"));
    let out = loadgate(&["compare", &old, &current, "--format", "json"]);
    let verdict = json(&out);
    // The same gate as between two current results: runs of 4 s are too short to judge, and
    // no invalid measurement for the unjudged baseline.
    assert_eq!(out.status.code(), Some(0), "{verdict:#}");
    assert_eq!(verdict["verdict"], "pass");
    assert!(
        verdict["rules"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("runs too short to judge"),
        "{verdict:#}"
    );
    assert_eq!(
        verdict["notes"][0],
        "the spec file changed since the baseline run"
    );
    // Without --baseline-history, the note on the machines (compare/between_runs.rs).
    assert_eq!(verdict["notes"].as_array().unwrap().len(), 2);
    assert!(
        verdict["notes"][1]
            .as_str()
            .unwrap()
            .starts_with("the verdict assumes that the baseline's machine")
    );

    let out = loadgate(&["compare", &current, &old]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 4)),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("INVALID"), "{stdout}");
}

#[test]
fn an_older_result_reports_beside_a_current_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(OLD), dir.path().join("a.json")).unwrap();
    std::fs::copy(fixture("current.json"), dir.path().join("b.json")).unwrap();
    let out = loadgate(&["report", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let verdict = json(&out);
    assert_eq!(verdict["trend"]["runs"].as_array().unwrap().len(), 2);

    let out = loadgate(&["report", &fixture(OLD)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("PASSED: 2/2 SLOs met"), "{stdout}");
    assert!(!stdout.contains("INVALID"), "{stdout}");
}

#[test]
fn each_version_of_one_result_compares_and_reports_alike() {
    let v1: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("current.json")).unwrap()).unwrap();
    let v2: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("v2-current.json")).unwrap())
            .unwrap();
    assert_eq!(
        (&v1["result_version"], &v2["result_version"]),
        (&1.into(), &2.into())
    );
    assert_eq!(
        v1["total"]["latency_us"]["p99"],
        v2["total"]["latency_us"]["p99_us"]
    );
    assert_eq!(
        v1["health"]["stages"][0]["achieved_concurrency"],
        v2["health"]["stages"][0]["achieved_in_flight"]
    );

    let baseline = fixture("baseline.json");
    let of = |current: &str, format: &str| {
        let out = loadgate(&["compare", &baseline, &fixture(current), "--format", format]);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for format in ["json", "md", "text"] {
        let (old, new) = (of("current.json", format), of("v2-current.json", format));
        assert_eq!(old.0, Some(0), "{}", old.1);
        assert_eq!(old, new, "{format}");
    }
}

/// A result of version 2 (before flows) reads as version 3: no flows, and each recorded
/// regression rule on the whole run; merged (through the binary) it is written as version 3.
#[test]
fn a_v2_result_reads_without_flows_and_with_whole_run_rules() {
    let v2: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("v2-current.json")).unwrap())
            .unwrap();
    assert_eq!(v2["result_version"], 2);
    assert!(v2.get("flows").is_none());
    assert!(v2["regression_rules"][0].get("scope").is_none());
    // A second shard: the same run from another host, still version 2.
    let dir = tempfile::tempdir().unwrap();
    let mut other = v2.clone();
    other["environment"]["hostname"] = "shard-2".into();
    let shard = dir.path().join("shard-2.json");
    std::fs::write(&shard, other.to_string()).unwrap();
    let out = dir.path().join("merged.json");
    let run = loadgate(&[
        "merge",
        &fixture("v2-current.json"),
        &shard.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(merged["result_version"], 4);
    assert_eq!(merged["flows"], serde_json::json!([]));
    let rules = merged["regression_rules"].as_array().unwrap();
    assert_eq!(rules.len(), 5);
    for rule in rules {
        assert_eq!(
            (&rule["scope_kind"], &rule["scope"]),
            (&"total".into(), &"total".into())
        );
    }
    assert_eq!(
        merged["total"]["requests"].as_u64(),
        v2["total"]["requests"].as_u64().map(|n| 2 * n)
    );
}
