//! The new fields' errors (scenarios, executors, arrivals, stages) come out as
//! `file:line:col: path: message`, from a real spec file.

use std::path::PathBuf;

use super::check;
use crate::spec::SourceSpec;

/// Writes `yaml` to a file of its own, validates it and returns its diagnostics' lines.
fn diagnostics(name: &str, yaml: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join(name);
    std::fs::write(&path, yaml).unwrap();
    let source = SourceSpec::read(&path).unwrap();
    let errors = check(&source, &|_| None).unwrap_err();
    let prefix = format!("{}:", path.display());
    errors
        .0
        .iter()
        .map(|d| {
            let line = d.to_string();
            line.strip_prefix(&prefix).unwrap_or(&line).to_string()
        })
        .collect()
}

#[test]
fn scenario_errors_point_into_the_file() {
    let yaml = "\
version: 1
name: shop
defaults:
  base_url: http://127.0.0.1:1
targets:
  - { name: list, path: /items }
  - { name: item, path: /items/1 }
flows:
  - name: checkout
    steps:
      - { name: cart, path: /cart }
load:
  connections: 4
scenarios:
  - name: browse
    executor: constant-vus
    targets: [list, nope]
    vus: 2
    duration: 10s
    rate: 5/s
  - name: browse
    executor: ramping-arrival-rate
    flows: [checkout]
    stages:
      - { duration: 5s, arrivals: 10, level: 2/s }
      - { duration: 1s, level: 3 }
    slo:
      latency: [\"p(95) <> 1s\"]
  - name: pay
    executor: constant-arrival-rate
    rate: 5/s
    targets: [item]
";
    assert_eq!(
        diagnostics("scenarios.yaml", yaml),
        [
            "13:16: load.connections: with `scenarios`, `load` gives only the settings they \
             share (`streams`, `threads`, `pre_connect`, `health`): give `connections` in the \
             scenarios",
            "17:21: scenarios[0].targets[1]: no target is named `nope`; the targets: list, item",
            "20:11: scenarios[0].rate: constant-vus takes `vus` and `duration` (and \
             `think_time`, `pacing`), not `rate`",
            "21:11: scenarios[1].name: scenario name `browse` is used twice",
            "25:35: scenarios[1].stages[0].arrivals: give `level` or `arrivals`, not both",
            "26:32: scenarios[1].stages[1].level: the open model's level is a rate such as `3/s`",
            "28:17: scenarios[1].slo.latency[0]: `p(95) <> 1s`: `> 1s` is not a duration: \
             expected e.g. `200ms` or `1.5s`",
            "29:5: scenarios[2]: missing `duration`: constant-arrival-rate takes `rate` and \
             `duration` (and `max_in_flight`)",
        ]
    );
}

#[test]
fn short_form_arrival_errors_point_into_the_file() {
    let yaml = "\
version: 1
name: t
targets:
  - { name: a, url: http://127.0.0.1:1/a }
load:
  stages:
    - { duration: 0s, level: 4 }
    - { duration: 5s, arrivals: 100 }
";
    assert_eq!(
        diagnostics("arrivals.yaml", yaml),
        [
            "8:33: load.stages[1].arrivals: arrivals apply to the open model only (`model: \
          open`, or an arrival-rate executor); the closed model's stages give a `level`"
        ]
    );
}
