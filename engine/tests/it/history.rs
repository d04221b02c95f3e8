//! `loadgate history add|list|show` on real result files: the committed `long-baseline.json`
//! (a 24 s run against `loadgate serve`, see `cli_compare.rs`) rewritten as a nightly history
//! would have it — one result a night, each from its own commit, with seeded run-to-run noise
//! of ±1.5% and a +20% step in the whole run's p95 at a known night — on one runner type, and
//! a few results of another runner type in between.

use crate::support;
use support::{loadgate, result_fixture};

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// Results of the stepped runner type.
const NIGHTS: usize = 16;
/// The first night after the step (0-based): result 12 of 16, within the last 5.
const STEP: usize = 11;
/// The other runner type's CPU model.
const OTHER_CPU: &str = "Other CPU 9000";

fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn fixture() -> Value {
    serde_json::from_str(&std::fs::read_to_string(result_fixture("long-baseline.json")).unwrap())
        .unwrap()
}

/// The commit of night `i`: 40 hex digits.
fn sha(i: usize) -> String {
    format!("{i:02x}{}", "c0ffee".repeat(7))[..40].to_string()
}

/// Seeded noise in [−1, 1] (xorshift64).
struct Noise(u64);
impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// `value` with its latency percentiles of `total` moved by `factor` each, the p95 by
/// `factor × p95_factor`, on the night `day` (at 02:00 UTC).
fn night(base: &Value, day: usize, factors: [f64; 3]) -> Value {
    let mut copy = base.clone();
    copy["started_at"] = Value::String(format!("2026-11-{:02}T02:00:00.000000Z", day + 1));
    let latency = &mut copy["total"]["latency_us"];
    for (field, factor) in ["p50_us", "p95_us", "p99_us"].iter().zip(factors) {
        let v = latency[field].as_f64().unwrap();
        latency[*field] = Value::from((v * factor).round() as u64);
    }
    copy
}

/// Writes the nights' result files into `runs` (stepped runner type: `n00.json`…, the other:
/// `o0.json`…) and returns them with the commit each measured (`None`: the other runner type's,
/// which record no source).
fn write_runs(runs: &Path) -> Vec<(PathBuf, Option<String>)> {
    std::fs::create_dir_all(runs).unwrap();
    let base = fixture();
    let mut noise = Noise(0x5eed_1234_abcd_0001);
    let mut files = Vec::new();
    for i in 0..NIGHTS {
        let step = if i >= STEP { 1.2 } else { 1.0 };
        let mut f = || 1.0 + 0.015 * noise.next();
        let value = night(&base, i, [f(), f() * step, f()]);
        let path = runs.join(format!("n{i:02}.json"));
        std::fs::write(&path, value.to_string()).unwrap();
        files.push((path, Some(sha(i))));
    }
    for (k, day) in [3, 8, 13].into_iter().enumerate() {
        let mut value = night(&base, day, [1.0, 1.2, 1.0]);
        value["environment"]["cpu_model"] = Value::String(OTHER_CPU.to_string());
        // An hour later than the other runner's night.
        value["started_at"] = Value::String(format!("2026-11-{:02}T03:00:00.000000Z", day + 1));
        let path = runs.join(format!("o{k}.json"));
        std::fs::write(&path, value.to_string()).unwrap();
        files.push((path, None));
    }
    files
}

/// `loadgate history add` of every run, on branch `main` with its commit and commit page.
fn add_all(store: &Path, runs: &[(PathBuf, Option<String>)]) -> Vec<PathBuf> {
    let store = store.to_str().unwrap();
    runs.iter()
        .map(|(path, commit)| {
            let mut args = vec![
                "history".to_string(),
                "add".to_string(),
                store.to_string(),
                path.display().to_string(),
                "--branch".to_string(),
                "main".to_string(),
            ];
            if let Some(c) = commit {
                args.extend([
                    "--commit".to_string(),
                    c.clone(),
                    "--commit-url".to_string(),
                    format!("https://github.com/acme/shop/commit/{c}"),
                ]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            PathBuf::from(ok(&loadgate(&args)).trim())
        })
        .collect()
}

#[test]
fn a_step_in_p95_is_named_with_its_commit_range_apart_from_the_other_runner_type() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let runs = write_runs(&dir.path().join("runs"));
    let stored = add_all(&store, &runs);

    // The layout: DIR/<spec-slug>/<started_at>-<commit 12 hex or unknown>-<hash 8 hex>.json.
    let name = stored[STEP].file_name().unwrap().to_str().unwrap();
    assert_eq!(stored[STEP].parent().unwrap(), store.join("long"));
    assert!(
        name.starts_with(&format!("20261112T020000.000000Z-{}-", &sha(STEP)[..12])),
        "{name}"
    );
    assert_eq!(
        name.len(),
        "20261112T020000.000000Z-".len() + 12 + 1 + 8 + 5,
        "{name}"
    );
    let other = stored[NIGHTS].file_name().unwrap().to_str().unwrap();
    assert!(
        other.starts_with("20261104T030000.000000Z-unknown-"),
        "{other}"
    );
    // The stored file records the source given on the command line.
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(&stored[STEP]).unwrap()).unwrap();
    assert_eq!(kept["source"]["commit"], sha(STEP).as_str());
    assert_eq!(kept["source"]["branch"], "main");

    // `list`: every result, in time order, with its branch, commit and runner type.
    let list = ok(&loadgate(&["history", "list", store.to_str().unwrap()]));
    let rows: Vec<&str> = list.lines().collect();
    assert_eq!(rows.len(), 1 + NIGHTS + 3, "{list}");
    assert!(rows[0].starts_with("time"), "{list}");
    assert!(
        rows[1].contains(&sha(0)[..12]) && rows[1].contains("main"),
        "{list}"
    );
    assert!(
        rows[5].contains(OTHER_CPU),
        "the other runner's 2026-11-04 result: {list}"
    );
    assert_eq!(list.matches(OTHER_CPU).count(), 3, "{list}");
    assert!(
        rows.last().unwrap().contains(&sha(NIGHTS - 1)[..12]),
        "{list}"
    );

    // `show --format json`: the step, at the right result, with its commit range; the other
    // runner type's results apart (their p95 is at the stepped level from the start).
    let json = ok(&loadgate(&[
        "history",
        "show",
        store.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["recent"], 5);
    let groups = report["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{json}");
    let stepped = groups
        .iter()
        .find(|g| !g["runner_type"].as_str().unwrap().contains(OTHER_CPU))
        .unwrap();
    let apart = groups
        .iter()
        .find(|g| g["runner_type"].as_str().unwrap().contains(OTHER_CPU))
        .unwrap();
    assert_eq!(stepped["results"], NIGHTS);
    assert_eq!(apart["results"], 3);
    assert_eq!(apart["events"], serde_json::json!([]), "{json}");
    let events = stepped["events"].as_array().unwrap();
    let p95_events: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["changes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["scope"] == "total" && c["metric"] == "p95")
        })
        .collect();
    assert_eq!(p95_events.len(), 1, "{json}");
    let event = p95_events[0];
    assert_eq!(event["result"], STEP + 1, "{event:#}");
    assert_eq!(event["new"], true);
    assert_eq!(event["before"]["commit"], sha(STEP - 1).as_str());
    assert_eq!(event["after"]["commit"], sha(STEP).as_str());
    assert_eq!(
        event["after"]["commit_url"],
        format!("https://github.com/acme/shop/commit/{}", sha(STEP))
    );
    assert_eq!(event["after"]["started_at"], "2026-11-12T02:00:00.000000Z");
    let change = event["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "p95")
        .unwrap();
    let (low, mid, high) = (
        change["low"].as_f64().unwrap(),
        change["change"].as_f64().unwrap(),
        change["high"].as_f64().unwrap(),
    );
    // The step as measured (with the noise of 11 and 5 nights), inside its interval.
    assert!(
        0.1 < low && low < mid && mid < high && high < 0.3 && (mid - 0.2).abs() < 0.03,
        "{change:#}"
    );
    assert_eq!(change["relative"], true);

    // Text and Markdown say the same; Markdown links the commits.
    let text = ok(&loadgate(&["history", "show", store.to_str().unwrap()]));
    assert!(
        text.contains(&format!(
            "NEW result {} of {NIGHTS}, 2026-11-12T02:00:00.000000Z: commits {}..{}",
            STEP + 1,
            &sha(STEP - 1)[..12],
            &sha(STEP)[..12]
        )),
        "{text}"
    );
    assert!(text.contains("total p95: +"), "{text}");
    let md = ok(&loadgate(&[
        "history",
        "show",
        store.to_str().unwrap(),
        "--format",
        "markdown",
    ]));
    assert!(
        md.contains(&format!(
            "[`{}`](https://github.com/acme/shop/commit/{})",
            &sha(STEP)[..12],
            sha(STEP)
        )),
        "{md}"
    );
    assert!(md.contains("**NEW**"), "{md}");
    assert!(md.contains("linux-x86\\_64"), "escaped: {md}");

    // With --recent 2 the step is no longer new; --spec of another name shows nothing.
    let old = ok(&loadgate(&[
        "history",
        "show",
        store.to_str().unwrap(),
        "--format",
        "json",
        "--recent",
        "2",
    ]));
    assert!(!old.contains("\"new\": true"), "{old}");
    let none = ok(&loadgate(&[
        "history",
        "show",
        store.to_str().unwrap(),
        "--spec",
        "other",
        "--format",
        "json",
    ]));
    assert_eq!(
        serde_json::from_str::<Value>(&none).unwrap()["groups"],
        serde_json::json!([])
    );
}

#[test]
fn adding_a_result_twice_stores_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let result = result_fixture("long-baseline.json");
    let add = |extra: &[&str]| {
        let mut args = vec![
            "history",
            "add",
            store.to_str().unwrap(),
            result.to_str().unwrap(),
        ];
        args.extend(extra);
        PathBuf::from(ok(&loadgate(&args)).trim())
    };
    let first = add(&["--commit", &sha(1)]);
    let again = add(&["--commit", &sha(1)]);
    assert_eq!(first, again);
    let files = || {
        std::fs::read_dir(store.join("long"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(files().len(), 1, "{:?}", files());
    // Another commit is another result: a second file, named by its commit.
    let other = add(&["--commit", &sha(2)]);
    assert_ne!(other, first);
    assert_eq!(files().len(), 2, "{:?}", files());
    assert!(
        files().iter().all(|f| !f.contains(".tmp")),
        "no temporary file left"
    );
    // A result that cannot be read is refused (exit 2) and stores nothing.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a result\"}").unwrap();
    let out = loadgate(&[
        "history",
        "add",
        store.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(files().len(), 2);
}

#[test]
fn a_folder_with_other_json_files_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(runs.join("nested/deeper")).unwrap();
    std::fs::create_dir_all(runs.join(".git")).unwrap();
    let base = fixture();
    let write = |path: PathBuf, value: &Value| std::fs::write(path, value.to_string()).unwrap();
    write(runs.join("b.json"), &night(&base, 1, [1.0; 3]));
    write(
        runs.join("nested/deeper/a.json"),
        &night(&base, 0, [1.0; 3]),
    );
    write(
        runs.join("notes.json"),
        &serde_json::json!({"notes": "not a result"}),
    );
    write(
        runs.join(".git/hidden.json"),
        &serde_json::json!({"hidden": true}),
    );
    std::fs::write(runs.join("README.md"), "not JSON at all").unwrap();

    let out = loadgate(&["history", "list", runs.to_str().unwrap()]);
    let list = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(list.lines().count(), 3, "a header and two results: {list}");
    // Time order, not name order: the nested result is the earlier night.
    assert!(list.lines().nth(1).unwrap().contains("deeper"), "{list}");
    assert!(
        stderr.contains("warning") && stderr.contains("notes.json"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("hidden.json"),
        "dot folders are skipped: {stderr}"
    );

    // The same folder as a `--baseline-history` of `compare`, and as `report`'s results.
    let current = result_fixture("long-current.json");
    let out = loadgate(&[
        "compare",
        result_fixture("long-baseline.json").to_str().unwrap(),
        current.to_str().unwrap(),
        "--baseline-history",
        runs.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(matches!(out.status.code(), Some(0 | 4)), "{out:?}");
    let out = loadgate(&["report", runs.to_str().unwrap(), "--format", "json"]);
    ok(&out);
    // A folder with no result at all is still refused there (exit 2).
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = loadgate(&["report", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
