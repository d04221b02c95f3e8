//! `loadgate compare`, `report`, `merge` and `run --baseline` as the binary: exit codes,
//! messages and output files, on the committed result fixtures. A regression is judged from
//! `long-baseline.json` and `long-current.json`: 24 s runs of `long.yaml` (two targets on the
//! closed model, 2 connections) against `loadgate serve` at `DELAY=10ms` and `DELAY=15ms`, long
//! enough to judge (`stats::MIN_SECONDS`); `baseline.json` and `current.json` (4 s) are too
//! short for a verdict.

use crate::support;
use support::{loadgate, result_fixture as fixture};

use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of a fixture with `edit` applied, in `dir`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    edit(&mut value);
    let path = dir.join(format!("edited-{name}"));
    std::fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn compare_exits_4_on_a_regression_and_0_on_the_same_run() {
    let (b, c) = (fixture("long-baseline.json"), fixture("long-current.json"));
    let out = loadgate(&["compare", b.to_str().unwrap(), c.to_str().unwrap()]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout}");
    assert!(
        stdout.contains("REGRESSED: 2/2 SLOs met; regression found"),
        "{stdout}"
    );
    // Runs of 4 s are too short to judge: no regression, whatever their numbers.
    let (b4, c4) = (fixture("baseline.json"), fixture("current.json"));
    let out = loadgate(&["compare", b4.to_str().unwrap(), c4.to_str().unwrap()]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("runs too short to judge: 4 and 4 complete seconds"),
        "{stdout}"
    );

    let out = loadgate(&[
        "compare",
        c.to_str().unwrap(),
        c.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["verdict"], "pass");
    assert_eq!(verdict["rule_counts"]["regressed"], 0);
    assert_eq!(verdict["rule_counts"]["improved"], 0);
}

#[test]
fn an_slo_failure_wins_over_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let current = edited(dir.path(), "long-current.json", |v| {
        v["passed"] = Value::Bool(false);
        v["slo"][0]["passed"] = Value::Bool(false);
    });
    let b = fixture("long-baseline.json");
    let out = loadgate(&["compare", b.to_str().unwrap(), &current, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["verdict"], "slo_failed");
    assert_eq!(
        verdict["regressed"], true,
        "the regression is still reported"
    );
}

#[test]
fn an_invalid_measurement_wins_over_everything_with_exit_5() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = (fixture("baseline.json"), fixture("current.json"));
    let invalid = |name| {
        edited(dir.path(), name, |v| {
            v["passed"] = Value::Bool(false);
            v["health"]["valid"] = Value::Bool(false);
            v["health"]["problems"] = serde_json::json!(["achieved 80/s of 100/s"]);
        })
    };
    for (baseline, current) in [
        (b.display().to_string(), invalid("current.json")),
        (invalid("baseline.json"), c.display().to_string()),
    ] {
        let out = loadgate(&["compare", &baseline, &current, "--format", "json"]);
        assert_eq!(out.status.code(), Some(5));
        let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(verdict["verdict"], "invalid_measurement");
        let notes = verdict["notes"].to_string();
        assert!(
            notes.contains("measurement is invalid") && notes.contains("80/s"),
            "{notes}"
        );
    }
}

#[test]
fn results_that_cannot_be_compared_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let b = fixture("baseline.json");
    let other = edited(dir.path(), "current.json", |v| {
        v["spec"]["name"] = "other".into()
    });
    let out = loadgate(&["compare", b.to_str().unwrap(), &other]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("different specs: `demo` (baseline) and `other` (current)"),
        "{stderr}"
    );

    let future = edited(dir.path(), "current.json", |v| {
        v["result_version"] = 5.into()
    });
    let out = loadgate(&["compare", b.to_str().unwrap(), &future]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("has result_version 5; this loadgate reads versions 1 to 4"),
        "{stderr}"
    );

    let out = loadgate(&["compare", "/nonexistent/b.json", b.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the result `/nonexistent/b.json`"),
        "{stderr}"
    );
}

#[test]
fn run_with_a_missing_baseline_fails_before_any_load() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    // Nothing listens there: had the run started, it would end with exit 3.
    std::fs::write(
        &spec,
        "version: 1\nname: demo\ntargets:\n  - name: a\n    url: http://127.0.0.1:9/\nload:\n  connections: 1\n  requests: 1\n",
    )
    .unwrap();
    let out = loadgate(&[
        "run",
        spec.to_str().unwrap(),
        "--quiet",
        "--baseline",
        dir.path().join("missing.json").to_str().unwrap(),
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing.json"), "{stderr}");
}

#[test]
fn report_writes_each_format_and_succeeds_whatever_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (b, c) = (fixture("long-baseline.json"), fixture("long-current.json"));
    for (format, marker) in [
        ("md", "### 📉 loadgate long"),
        ("html", "<!doctype html>"),
        ("junit", "<testsuites "),
        ("json", "\"verdict_version\": 1"),
    ] {
        let path = dir.path().join(format!("report.{format}"));
        let out = loadgate(&[
            "report",
            c.to_str().unwrap(),
            "--baseline",
            b.to_str().unwrap(),
            "--format",
            format,
            "--output",
            path.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
        assert!(out.stdout.is_empty());
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.contains(marker), "{format}: {written}");
    }
}

#[test]
fn report_over_a_folder_adds_a_trend_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    // Given in reverse order: the report sorts by started_at.
    std::fs::copy(fixture("current.json"), dir.path().join("a.json")).unwrap();
    std::fs::copy(fixture("baseline.json"), dir.path().join("b.json")).unwrap();
    let out = loadgate(&["report", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    let trend = &verdict["trend"];
    assert_eq!(trend["runs"].as_array().unwrap().len(), 2);
    let p50 = trend["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "p50_us")
        .unwrap();
    // baseline.json ran first (7.30 ms), current.json last (8.06 ms).
    assert_eq!(p50["raw"], serde_json::json!([7295.0, 8063.0]));
    assert_eq!(p50["vs_previous"], "+10.5%");
    assert_eq!(p50["vs_median"], "+10.5%");
    assert_eq!(verdict["current"]["headline"]["p50_us"], 8063);

    let out = loadgate(&["report", dir.path().to_str().unwrap(), "--format", "md"]);
    let (md, _) = text(&out);
    assert!(md.contains("#### Trend over the last 2 runs"), "{md}");
}

#[test]
fn merge_adds_shards_and_refuses_other_specs() {
    let dir = tempfile::tempdir().unwrap();
    let c = fixture("current.json");
    // The same run measured again on another host: a second shard (the same result twice is
    // refused, tests/it/cli_inputs.rs).
    let shard = edited(dir.path(), "current.json", |v| {
        v["environment"]["hostname"] = "shard-2".into()
    });
    let merged = dir.path().join("merged.json");
    let out = loadgate(&[
        "merge",
        c.to_str().unwrap(),
        &shard,
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let one: Value = serde_json::from_str(&std::fs::read_to_string(&c).unwrap()).unwrap();
    let two: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let n = |v: &Value, k: &str| v["total"][k].as_u64().unwrap();
    assert_eq!(n(&two, "requests"), 2 * n(&one, "requests"));
    assert_eq!(n(&two, "responses"), 2 * n(&one, "responses"));
    // The same distribution twice: the same percentiles, recomputed from the added histogram
    // (the fixture is a version-1 result, with `p99`; the merge writes version 4, `p99_us`).
    assert_eq!(one["result_version"], 1);
    assert_eq!(two["result_version"], 4);
    assert_eq!(
        two["total"]["latency_us"]["p99_us"],
        one["total"]["latency_us"]["p99"]
    );
    let h =
        loadgate::result::decode_histogram(two["total"]["histogram"].as_str().unwrap()).unwrap();
    assert_eq!(h.len(), 2 * n(&one, "responses"));
    let rps = |v: &Value| v["total"]["rps"].as_f64().unwrap();
    assert!((rps(&two) - 2.0 * rps(&one)).abs() < 1e-6);

    // The merged run is judged on its SLOs, re-evaluated on the merged numbers: a p95 above
    // the (edited) limit fails the merge with exit 1, as it would fail `run`.
    let strict = |hostname: &str, name: &str| {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&c).unwrap()).unwrap();
        v["slo"][0]["threshold"] = "p(95) < 1ms".into();
        v["environment"]["hostname"] = hostname.into();
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
        path.display().to_string()
    };
    let (c_strict, shard_strict) = (
        strict("shard-1", "strict-1.json"),
        strict("shard-2", "strict-2.json"),
    );
    let out = loadgate(&[
        "merge",
        &c_strict,
        &shard_strict,
        "--out",
        merged.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("p(95) < 1ms"), "{stdout}");

    let other = edited(dir.path(), "current.json", |v| {
        v["spec"]["hash"] = "0".repeat(64).into()
    });
    let out = loadgate(&[
        "merge",
        c.to_str().unwrap(),
        &other,
        "--out",
        merged.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("result 2 comes from another spec"),
        "{stderr}"
    );
}

#[test]
fn schema_verdict_prints_the_verdict_schema() {
    let out = loadgate(&["schema", "verdict"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["title"], "loadgate verdict");
    assert!(schema["properties"]["exit_code"].is_object());
}

#[test]
fn junit_names_the_spec_given_with_spec_as_each_failing_case_file() {
    let (b, c) = (fixture("long-baseline.json"), fixture("long-current.json"));
    let args = |spec: Option<&str>| {
        let mut a = vec![
            "compare",
            b.to_str().unwrap(),
            c.to_str().unwrap(),
            "--format",
            "junit",
        ];
        if let Some(spec) = spec {
            a.extend(["--spec", spec]);
        }
        loadgate(&a)
    };
    let with = args(Some("perf/api.loadgate.yaml"));
    let (xml, stderr) = text(&with);
    assert!(with.status.code().is_some(), "{stderr}");
    // minijinja's XML escaping writes the slash as `&#x2f;`, which XML readers decode.
    let file = "file=\"perf&#x2f;api.loadgate.yaml\"";
    assert!(
        xml.contains("<failure"),
        "the fixture has a failing check: {xml}"
    );
    assert!(xml.contains(file), "{xml}");
    let (xml, _) = text(&args(None));
    assert!(
        !xml.contains("file=\""),
        "no --spec, no file attribute: {xml}"
    );
}
