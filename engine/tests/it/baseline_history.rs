//! `compare --baseline-history` and `report --baseline --baseline-history` on real result files:
//! runs against the built-in target (`loadgate serve`, in process), 3 s after a 1 s warmup.
//!
//! The earlier runs stand for a stored baseline's history on machines that differ: the same
//! build measured at a server delay of 20, 23, 18 and 21 ms (a run-to-run spread of about 9%
//! of the median). The current run's median is 10% above the baseline's (22 ms against 20 ms),
//! beyond the rule's 5%: within the runs' own noise that is a regression, within the
//! run-to-run spread it is not.

use crate::support;
use support::loadgate;

use std::path::Path;
use std::process::Output;

use loadgate::result::{self, RunResult};
use loadgate::serve::spawn;
use serde_json::Value;

const RULES: &str =
    "regression:\n  latency: [\"p(50) +5% floor 200us\"]\n  errors: []\n  requests: []\n";

/// A run at `delay`, written to `path`.
fn run_to(server_url: &str, dir: &Path, delay: &str, path: &Path) -> RunResult {
    let text = support::delay_spec("history", server_url, delay, "3s", RULES);
    let result = support::run_spec_text(dir, &text);
    result::write(&result, path).unwrap();
    result
}

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

#[test]
fn a_change_within_the_run_to_run_spread_is_not_a_regression_with_history() {
    let _turn = support::turn();
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    std::fs::create_dir(&history).unwrap();
    let url = server.url();
    for (i, delay) in ["20ms", "23ms", "18ms", "21ms"].iter().enumerate() {
        run_to(&url, dir.path(), delay, &history.join(format!("h{i}.json")));
    }
    // The baseline is in the history folder too, as a kept baseline would be: it counts once.
    let baseline = history.join("baseline.json");
    run_to(&url, dir.path(), "20ms", &baseline);
    let current = dir.path().join("current.json");
    let c = run_to(&url, dir.path(), "22ms", &current);
    assert!(c.passed, "{:?}", c.slo);
    let (b, c) = (baseline.to_str().unwrap(), current.to_str().unwrap());
    let json = ["--format", "json"];

    // Without history: the interval covers the runs' own noise, the change is a regression,
    // and the note says what was assumed.
    let out = loadgate(&[&["compare", b, c][..], &json].concat());
    let alone = verdict(&out);
    assert_eq!(out.status.code(), Some(4), "{alone:#}");
    let rule = &alone["rules"][0];
    assert_eq!(rule["verdict"], "regressed", "{rule:#}");
    let relative = rule["relative_change"].as_f64().unwrap();
    assert!((0.07..0.14).contains(&relative), "{rule:#}");
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

    // With the folder (4 earlier results and the baseline): the interval is widened by the
    // run-to-run spread and the +10% is within it.
    let folder = history.display().to_string();
    let out = loadgate(&[&["compare", b, c, "--baseline-history", &folder][..], &json].concat());
    let widened = verdict(&out);
    assert_eq!(out.status.code(), Some(0), "{widened:#}");
    let wide = &widened["rules"][0];
    assert_eq!(wide["verdict"], "inconclusive", "{wide:#}");
    let [lo, hi] = [0, 1].map(|i| wide["relative_change_ci"][i].as_f64().unwrap());
    // The spread's half-width is t(4)·√2·sd ≈ 2.78 × 1.41 × 0.09 ≈ 0.35 in log ratio.
    assert!(lo < -0.15 && hi > 0.35, "{wide:#}");
    let note = notes(&widened);
    assert!(
        note.contains("over 4 earlier results and the baseline")
            && note.contains("latency p(50) ±"),
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
        text.contains("intervals widened by the run-to-run variation"),
        "{text}"
    );
}

#[test]
fn history_needs_a_baseline_and_valid_results_of_the_same_spec() {
    let fixture = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/results")
            .join(name)
            .display()
            .to_string()
    };
    let (b, c) = (fixture("baseline.json"), fixture("current.json"));
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
    // Identical values: no spread, so no rule's interval was widened.
    assert!(
        text.contains("latency p(50) not widened (run-to-run ±0.0%"),
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
