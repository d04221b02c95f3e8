//! A spec of `scenarios` through the binary: `loadgate validate` points each new field's
//! error at its line and column, and the commands that cannot run scenarios yet (`loadgate
//! ab`, `loadgate run --shard`) refuse them with a clear message (exit 2) before any load.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary with `args`.
fn loadgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(args)
        .output()
        .expect("run loadgate")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes `yaml` to `dir/spec.yaml`; returns its path.
fn write(dir: &Path, yaml: &str) -> String {
    let path = dir.join("spec.yaml");
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

#[test]
fn validate_points_at_scenario_fields() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(
        dir.path(),
        "version: 1\nname: t\ntargets:\n  - { name: a, url: \"http://127.0.0.1:9/\" }\n\
         scenarios:\n  - name: s\n    executor: per-vu-iterations\n    targets: [a]\n    \
         vus: 2\n    rate: 5/s\n    stages:\n      - { duration: 1s, level: 2 }\n",
    );
    let out = loadgate(&["validate", &spec]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    let takes = "per-vu-iterations takes `vus` (and `iterations`, `max_duration`, \
                 `think_time`, `pacing`)";
    for line in [
        format!("{spec}:10:11: scenarios[0].rate: {takes}, not `rate`"),
        format!("{spec}:12:7: scenarios[0].stages: {takes}, not `stages`"),
    ] {
        assert!(err.contains(&line), "{line}\nin:\n{err}");
    }
}

#[test]
fn ab_and_shards_refuse_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(
        dir.path(),
        "version: 1\nname: t\ntargets:\n  - { name: a, url: \"http://127.0.0.1:9/\" }\n\
         scenarios:\n  - { name: s, executor: shared-iterations, vus: 1, targets: [a] }\n",
    );
    let out = loadgate(&[
        "ab",
        &spec,
        "--baseline-url",
        "http://127.0.0.1:9",
        "--candidate-url",
        "http://127.0.0.1:10",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("this spec gives `scenarios`: give it a `load` block instead"),
        "{}",
        stderr(&out)
    );
    let out = loadgate(&["run", &spec, "--shard", "1/2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shard 1/2: a spec of `scenarios` cannot be split over shards"),
        "{}",
        stderr(&out)
    );
}
