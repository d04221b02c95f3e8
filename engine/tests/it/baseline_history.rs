//! `compare --baseline-history` and `report --baseline --baseline-history` on real result files:
//! the committed `long-baseline.json` and `long-current.json` (24 s runs against `loadgate
//! serve` at a delay of 10 ms and 15 ms; see `cli_compare.rs`), and earlier results made from
//! the baseline with their whole-run median moved as nightly runs of the same build move it.
//!
//! With a history, each rule is judged against the level (median) of the comparable results
//! since the last change point, within a prediction bound from their spread
//! (`compare/between_runs.rs`). The current run's median is 42% above the baseline's, beyond the
//! rule's 10%: against a calm history (±2%) that is a regression; against a history whose runs
//! spread by ±30% it cannot be told; with fewer than 5 comparable results the rule is not judged.

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

/// A folder `name` in `dir` of copies of `base` a night apart, their median `factors` × its own.
fn history(dir: &Path, name: &str, base: &Value, factors: &[f64]) -> String {
    let folder = dir.join(name);
    std::fs::create_dir(&folder).unwrap();
    let p50 = base["total"]["latency_us"]["p50_us"].as_f64().unwrap();
    for (i, factor) in factors.iter().enumerate() {
        let mut copy = base.clone();
        copy["started_at"] = Value::String(format!("2026-01-{:02}T03:00:00Z", i + 1));
        copy["total"]["latency_us"]["p50_us"] = Value::from((p50 * factor).round() as u64);
        write(&copy, &folder.join(format!("h{i:02}.json")));
    }
    folder.display().to_string()
}

#[test]
fn a_change_is_judged_against_the_level_of_the_comparable_history() {
    let dir = tempfile::tempdir().unwrap();
    let base = read("long-baseline.json");
    let b = write(&base, &dir.path().join("baseline.json"));
    // The median's rule alone.
    let mut current = read("long-current.json");
    current["regression_rules"] = serde_json::json!([current["regression_rules"][0]]);
    assert_eq!(current["regression_rules"][0]["aggregation"], "p(50)");
    let c = write(&current, &dir.path().join("current.json"));
    let (b, c) = (b.as_str(), c.as_str());
    let json = ["--format", "json"];
    let calm = [
        1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02, 0.98,
    ];
    let calm = history(dir.path(), "calm", &base, &calm);
    let wide = [1.0, 1.5, 0.7, 1.3, 0.8, 1.4, 0.75, 1.2, 0.9, 1.45, 0.72];
    let wide = history(dir.path(), "wide", &base, &wide);

    // Without history: the two runs alone, a regression, and the note says what was assumed.
    let out = loadgate(&[&["compare", b, c][..], &json].concat());
    let alone = verdict(&out);
    assert_eq!(out.status.code(), Some(4), "{alone:#}");
    assert_eq!(alone["rules"][0]["verdict"], "regressed");
    assert_eq!(alone["family"]["method"], "max-t");
    assert!(
        notes(&alone).starts_with(
            "the verdict assumes that the baseline's machine and this run's were alike"
        ) && notes(&alone).contains("`compare --baseline-history`"),
        "{}",
        notes(&alone)
    );

    // Two earlier results and the baseline: 3 of 5, not judged, and the gate passes.
    let two = [format!("{calm}/h00.json"), format!("{calm}/h01.json")];
    let out = loadgate(
        &[
            &["compare", b, c, "--baseline-history", &two[0]][..],
            &["--baseline-history", &two[1]],
            &json,
        ]
        .concat(),
    );
    let few = verdict(&out);
    assert_eq!(out.status.code(), Some(0), "{few:#}");
    let rule = &few["rules"][0];
    assert_eq!(rule["verdict"], "inconclusive", "{rule:#}");
    let reason = rule["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "3 of 5 comparable results since the last change point (runner type `linux-x86_64, \
             unknown CPU, 2 CPUs`): 2 more needed"
        ),
        "{reason}"
    );

    // A calm history of 11 nights and the baseline: the median's level within ±2%, so +42% is
    // beyond the rule's 10% and its bound.
    let out = loadgate(&[&["compare", b, c, "--baseline-history", &calm][..], &json].concat());
    let judged = verdict(&out);
    assert_eq!(out.status.code(), Some(4), "{judged:#}");
    let rule = &judged["rules"][0];
    assert_eq!(rule["verdict"], "regressed", "{rule:#}");
    assert_eq!(rule["samples"], serde_json::json!([12, 1]), "{rule:#}");
    assert_eq!(judged["family"]["method"], "holm");
    let level = rule["baseline"].as_f64().unwrap();
    let p50 = base["total"]["latency_us"]["p50_us"].as_f64().unwrap();
    assert!(
        (level / p50 - 1.0).abs() < 0.011,
        "the level is the median: {rule:#}"
    );
    assert!(
        rule["reason"]
            .as_str()
            .unwrap()
            .contains("(against the median of 12 comparable results since 2026-01-01T03:00:00Z"),
        "{rule:#}"
    );
    let note = notes(&judged);
    assert!(
        note.starts_with("compared with the stored history")
            && note.contains("(12 comparable result(s): this spec, runner type `linux-x86_64")
            && note.contains(
                ": 12 results since 2026-01-01T03:00:00Z for latency p(50) +10% floor 200us"
            ),
        "{note}"
    );

    // A history whose runs spread by ±30%: the +42% cannot be told from it.
    let out = loadgate(&[&["compare", b, c, "--baseline-history", &wide][..], &json].concat());
    let spread = verdict(&out);
    assert_eq!(out.status.code(), Some(0), "{spread:#}");
    let rule = &spread["rules"][0];
    assert_eq!(rule["verdict"], "inconclusive", "{rule:#}");
    let [lo, hi] = [0, 1].map(|i| rule["relative_change_ci"][i].as_f64().unwrap());
    assert!(lo < 0.1 && hi > 0.5, "{rule:#}");
    assert!(
        rule["reason"]
            .as_str()
            .unwrap()
            .contains("more comparable results since the change point, or longer runs on a quieter runner, would tell"),
        "{rule:#}"
    );

    report_takes_the_history_alike(b, c, &calm);
}

/// `report` with `--baseline` takes the history as `compare` does (and exits 0 whatever the
/// verdict); the text report shows the note too.
fn report_takes_the_history_alike(b: &str, c: &str, calm: &str) {
    let json = ["--format", "json"];
    let out = loadgate(
        &[
            &["report", c, "--baseline", b, "--baseline-history", calm][..],
            &json,
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0));
    let reported = verdict(&out);
    assert_eq!(reported["rules"][0]["verdict"], "regressed");
    assert!(notes(&reported).contains("12 results since"));
    let out = loadgate(&["compare", b, c, "--baseline-history", calm]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("compared with the stored history"), "{text}");
}

#[test]
fn history_needs_a_baseline_and_leaves_out_results_not_comparable() {
    let fixture = |name: &str| result_fixture(name).display().to_string();
    let (b, c) = (fixture("long-baseline.json"), fixture("long-current.json"));
    let out = loadgate(&["report", &c, "--baseline-history", &b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--baseline"));

    // Results of another spec, another runner type or another branch than the baseline's, and
    // invalid measurements are left out, and said to be; copies of the baseline from other
    // times count.
    let history = tempfile::tempdir().unwrap();
    let mut base: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    base["source"] = serde_json::json!({"branch": "main"});
    let b = history.path().join("baseline.json");
    std::fs::write(&b, base.to_string()).unwrap();
    let b = b.display().to_string();
    for i in 0..9 {
        let mut copy = base.clone();
        copy["started_at"] = Value::String(format!("2026-01-0{}T00:00:00Z", i + 1));
        match i {
            0 => copy["spec"]["name"] = Value::String("another-spec".to_string()),
            1 => copy["health"]["valid"] = Value::Bool(false),
            2 => copy["environment"]["cpu_model"] = Value::String("Another CPU".to_string()),
            3 => copy["source"]["branch"] = Value::String("feature".to_string()),
            _ => {}
        }
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
    assert!(
        text.contains("(6 comparable result(s): this spec, runner type `linux-x86_64, unknown CPU, 2 CPUs`, branch `main`)"),
        "{text}"
    );
    for why in [
        "of another spec",
        "invalid measurements",
        "of another runner type",
        "of another branch than the baseline's",
    ] {
        assert!(
            text.contains(&format!(
                "1 result(s) of the history left out as not comparable: {why}"
            )),
            "{why}: {text}"
        );
    }
    // Identical values: no spread, so the rule is decided from the change alone.
    assert_eq!(v["rules"][0]["samples"], serde_json::json!([6, 1]), "{v:#}");
    assert_eq!(v["rules"][0]["verdict"], "regressed", "{v:#}");

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
