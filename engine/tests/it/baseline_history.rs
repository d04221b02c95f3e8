//! `compare --baseline-history` and `report --baseline --baseline-history` on real result files:
//! the committed `long-baseline.json` and `long-current.json` (24 s runs against `loadgate
//! serve` at a delay of 10 ms and 15 ms; see `cli_compare.rs`), and earlier results made from
//! the baseline with their whole-run median moved as runs on other machines would move it.
//!
//! The earlier runs stand for a stored baseline's history on machines that differ: the same
//! build measured with a median at 1.0, 1.5, 0.7 and 1.3 times the baseline's (a run-to-run
//! spread of about 30% of the median). The current run's median is 42% above the baseline's,
//! beyond the rule's 10%: within the runs' own noise that is a regression, within the
//! run-to-run spread it is not.

use crate::support;
use support::{loadgate, result_fixture};

use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn verdict(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn notes(v: &Value) -> String {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn read(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(result_fixture(name)).unwrap()).unwrap()
}

/// `value` written to `path`.
fn write(value: &Value, path: &Path) -> String {
    std::fs::write(path, value.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn a_change_within_the_run_to_run_spread_is_not_a_regression_with_history() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    std::fs::create_dir(&history).unwrap();
    let base = read("long-baseline.json");
    let p50 = base["total"]["latency_us"]["p50_us"].as_f64().unwrap();
    for (i, factor) in [1.0, 1.5, 0.7, 1.3].iter().enumerate() {
        let mut copy = base.clone();
        copy["started_at"] = Value::String(format!("2026-01-0{}T00:00:00Z", i + 1));
        copy["total"]["latency_us"]["p50_us"] = Value::from((p50 * factor).round() as u64);
        write(&copy, &history.join(format!("h{i}.json")));
    }
    // The baseline is in the history folder too, as a kept baseline would be: it counts once.
    let b = write(&base, &history.join("baseline.json"));
    // The median's rule alone.
    let mut current = read("long-current.json");
    current["regression_rules"] = serde_json::json!([current["regression_rules"][0]]);
    assert_eq!(current["regression_rules"][0]["aggregation"], "p(50)");
    let c = write(&current, &dir.path().join("current.json"));
    let (b, c) = (b.as_str(), c.as_str());
    let json = ["--format", "json"];

    // Without history: the interval covers the runs' own noise, the change is a regression,
    // and the note says what was assumed.
    let out = loadgate(&[&["compare", b, c][..], &json].concat());
    let alone = verdict(&out);
    assert_eq!(out.status.code(), Some(4), "{alone:#}");
    let rule = &alone["rules"][0];
    assert_eq!(rule["verdict"], "regressed", "{rule:#}");
    let relative = rule["relative_change"].as_f64().unwrap();
    assert!((0.3..0.6).contains(&relative), "{rule:#}");
    assert!(rule["level"].as_f64().unwrap() <= 0.05, "{rule:#}");
    assert!(
        notes(&alone)
            .contains("the verdict assumes that the baseline's machine and this run's were alike")
            && notes(&alone).contains("(0 given)"),
        "{}",
        notes(&alone)
    );

    // With two earlier results: too few for an estimate; the same verdict, the same note.
    let two = [
        history.join("h0.json").display().to_string(),
        history.join("h1.json").display().to_string(),
    ];
    let out = loadgate(
        &[
            &["compare", b, c, "--baseline-history", &two[0]][..],
            &["--baseline-history", &two[1]],
            &json,
        ]
        .concat(),
    );
    let few = verdict(&out);
    assert_eq!(out.status.code(), Some(4), "{few:#}");
    assert!(notes(&few).contains("(2 given)"), "{}", notes(&few));
    assert_eq!(few["rules"][0]["change_ci"], rule["change_ci"]);

    // With the folder (4 earlier results and the baseline): the standard error gets the
    // run-to-run spread, and the +42% is within it.
    let folder = history.display().to_string();
    let out = loadgate(&[&["compare", b, c, "--baseline-history", &folder][..], &json].concat());
    let widened = verdict(&out);
    assert_eq!(out.status.code(), Some(0), "{widened:#}");
    let wide = &widened["rules"][0];
    assert_eq!(wide["verdict"], "inconclusive", "{wide:#}");
    let [lo, hi] = [0, 1].map(|i| wide["relative_change_ci"][i].as_f64().unwrap());
    // sd of the logs of 1, 1.5, 0.7, 1.3, 1 is 0.29: se √2·0.29 = 0.41 (+51%), t(4) at 5%: 2.13.
    assert!(lo < 0.0 && hi > 1.0, "{wide:#}");
    let note = notes(&widened);
    assert!(
        note.contains("over 4 earlier results and the baseline")
            && note.contains("latency p(50) +10% floor 200us 5")
            && note.contains("% (within-run "),
        "{note}"
    );
    assert!(
        wide["reason"]
            .as_str()
            .unwrap()
            .contains("widened by the run-to-run variation"),
        "{wide:#}"
    );

    // `report` with `--baseline` takes the history alike (and exits 0 whatever the verdict).
    let out = loadgate(
        &[
            &["report", c, "--baseline", b, "--baseline-history", &folder][..],
            &json,
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0));
    let reported = verdict(&out);
    assert_eq!(reported["rules"][0]["verdict"], "inconclusive");
    assert!(notes(&reported).contains("over 4 earlier results"));
    // The text report shows the note too.
    let out = loadgate(&["compare", b, c, "--baseline-history", &folder]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("standard errors widened by the run-to-run variation"),
        "{text}"
    );
}

#[test]
fn history_needs_a_baseline_and_valid_results_of_the_same_spec() {
    let fixture = |name: &str| result_fixture(name).display().to_string();
    let (b, c) = (fixture("long-baseline.json"), fixture("long-current.json"));
    let out = loadgate(&["report", &c, "--baseline-history", &b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--baseline"));

    // A result of another spec in the history is refused (exit 2), naming both specs.
    let dir = tempfile::tempdir().unwrap();
    let mut other: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    other["spec"]["name"] = Value::String("another-spec".to_string());
    let path = dir.path().join("other.json");
    std::fs::write(&path, other.to_string()).unwrap();
    let out = loadgate(&[
        "compare",
        &b,
        &c,
        "--baseline-history",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another-spec"), "{stderr}");

    // Invalid measurements are left out, and said to be; copies of the baseline from other
    // times count (3 of them: enough for an estimate).
    let history = tempfile::tempdir().unwrap();
    let base: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    for (i, valid) in [true, true, false, true].iter().enumerate() {
        let mut copy = base.clone();
        copy["started_at"] = Value::String(format!("2026-01-0{}T00:00:00Z", i + 1));
        copy["health"]["valid"] = Value::Bool(*valid);
        let path = history.path().join(format!("h{i}.json"));
        std::fs::write(path, copy.to_string()).unwrap();
    }
    let folder = history.path().to_str().unwrap();
    let out = loadgate(&[
        "compare",
        &b,
        &c,
        "--baseline-history",
        folder,
        "--format",
        "json",
    ]);
    let v = verdict(&out);
    let text = notes(&v);
    assert!(text.contains("over 3 earlier results"), "{text}");
    assert!(
        text.contains("1 earlier result(s) left out of the run-to-run variation"),
        "{text}"
    );
    // Identical values: no spread, so no rule's standard error was widened.
    assert!(
        text.contains("latency p(50) +10% floor 200us not widened (run-to-run 0.0%"),
        "{text}"
    );

    // An empty folder is refused too.
    let empty = tempfile::tempdir().unwrap();
    let out = loadgate(&[
        "compare",
        &b,
        &c,
        "--baseline-history",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}
