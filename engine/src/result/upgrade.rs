//! Results written by earlier loadgate versions, brought up to date as they are read.
//!
//! [`super::read`] parses a file as JSON, upgrades the JSON here, and only then reads it into
//! the current types. Two kinds of step:
//!
//! - **Within a version**, a field made required later is filled in for the files written
//!   before it existed ([`complete_v1`]). (Fields added as optional carry `#[serde(default)]`
//!   on their type and need no step: `load.streams`, a target's `service_time_us`, `checks`,
//!   `phases_us` and `transport`, `regression_rules`, and the per-second `p90_us`, `p95_us`,
//!   `p99_9_us`, `mean_us` and `requests`.)
//! - **From one version to the next**, `STEPS[i]` turns a result of version
//!   `OLDEST_VERSION + i` into one of the next version (a renamed field, a new shape). The
//!   array's length is `RESULT_VERSION - OLDEST_VERSION`: bumping [`RESULT_VERSION`] does not
//!   compile until the step to the new version is written.

use serde_json::{Map, Value, json};

use super::RESULT_VERSION;

/// The oldest `result_version` this loadgate reads.
pub(super) const OLDEST_VERSION: u32 = 1;

/// One upgrade step, on the result's top-level JSON object.
type Step = fn(&mut Map<String, Value>);

/// `STEPS[i]` upgrades a result of version `OLDEST_VERSION + i` to the next version; the
/// caller then sets its `result_version`.
const STEPS: [Step; (RESULT_VERSION - OLDEST_VERSION) as usize] = [v1_to_v2, v2_to_v3, v3_to_v4];

/// Why a result's JSON cannot be upgraded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unreadable {
    /// Not an object with a numeric `result_version`.
    NoVersion,
    /// A version older than the oldest read, or newer than this loadgate's.
    Version(u64),
}

/// Upgrades `value`, a result of any version from `OLDEST_VERSION` to [`RESULT_VERSION`],
/// in place to a result of [`RESULT_VERSION`] with every required field present.
pub(super) fn upgrade(value: &mut Value) -> Result<(), Unreadable> {
    let result = value.as_object_mut().ok_or(Unreadable::NoVersion)?;
    let found = result
        .get("result_version")
        .and_then(Value::as_u64)
        .ok_or(Unreadable::NoVersion)?;
    if !(u64::from(OLDEST_VERSION)..=u64::from(RESULT_VERSION)).contains(&found) {
        return Err(Unreadable::Version(found));
    }
    if found == 1 {
        complete_v1(result);
    }
    let mut version = found as u32;
    for step in &STEPS[(version - OLDEST_VERSION) as usize..] {
        step(result);
        version += 1;
        result.insert("result_version".to_string(), version.into());
    }
    Ok(())
}

/// Version 1 as written before the load generator's health was judged (before loadgate had
/// load models and exit code 5): no `health`.
///
/// The generator of such a run was not judged, so nothing is known to be wrong with it. It
/// reads as `valid: true` with no problems and **no stages** (a judged run always lists its
/// stages, so an empty list says "not judged"). `valid: false` would not be honest either:
/// `compare` and the reports would then call the measurement invalid ("the load generator
/// fell short of the plan") and end every comparison with that result as a baseline with
/// exit code 5, for a run that nothing found fault with. With `valid: true` such a result
/// compares and reports as it did when it was written; the console shows no stage table.
fn complete_v1(result: &mut Map<String, Value>) {
    result
        .entry("health")
        .or_insert_with(|| json!({ "valid": true, "problems": [], "stages": [] }));
}

/// Version 1 -> 2, one vocabulary (issue 13): every time in a latency or phase summary names
/// its unit (`p99` -> `p99_us`, `mean` -> `mean_us`, ...); a stage's `target_*` is its
/// `level_*` and `achieved_concurrency` is `achieved_in_flight`; the load's `connections`, which
/// meant the cap on requests in flight in the open model, is `max_in_flight` there.
fn v1_to_v2(result: &mut Map<String, Value>) {
    let mut targets: Vec<&mut Value> = Vec::new();
    for (key, value) in result.iter_mut() {
        match (key.as_str(), value) {
            ("total", total) => targets.push(total),
            ("targets", Value::Array(list)) => targets.extend(list.iter_mut()),
            _ => {}
        }
    }
    for target in targets {
        for key in ["latency_us", "service_time_us"] {
            add_unit(target.get_mut(key));
        }
        if let Some(Value::Object(phases)) = target.get_mut("phases_us") {
            for (_, phase) in phases.iter_mut() {
                add_unit(Some(phase));
            }
        }
    }
    if let Some(Value::Array(stages)) = result.get_mut("health").and_then(|h| h.get_mut("stages")) {
        for stage in stages.iter_mut().filter_map(Value::as_object_mut) {
            for (old, new) in [
                ("target_from", "level_from"),
                ("target_to", "level_to"),
                ("target_unit", "level_unit"),
                ("achieved_concurrency", "achieved_in_flight"),
            ] {
                if let Some(v) = stage.remove(old) {
                    stage.insert(new.to_string(), v);
                }
            }
            add_unit(stage.get_mut("lateness_us"));
        }
    }
    if let Some(Value::Object(load)) = result.get_mut("load")
        && load.get("model").and_then(Value::as_str) == Some("open")
        && let Some(cap) = load.remove("connections")
    {
        load.insert("max_in_flight".to_string(), cap);
    }
}

/// Version 2 -> 3, flows (issue 16): a result gains `flows` (none in a result of version 2,
/// which `#[serde(default)]` reads as empty) and a recorded regression rule its scope (`total`
/// when absent). Both read with their defaults, so nothing in the JSON changes.
fn v2_to_v3(_: &mut Map<String, Value>) {}

/// Version 3 -> 4, shards (issue 17): a result may record its shard, its planned start and
/// what a merge merged, and each second (of the run and of each target) its histogram. All are
/// optional, so nothing in the JSON changes; `started_at` keeps its milliseconds.
fn v3_to_v4(_: &mut Map<String, Value>) {}

/// Version 1 -> 2 of one latency or phase summary: `_us` after each time's name.
fn add_unit(summary: Option<&mut Value>) {
    let Some(Value::Object(summary)) = summary else {
        return;
    };
    for key in [
        "min", "mean", "stdev", "p50", "p90", "p95", "p99", "p99_9", "max",
    ] {
        if let Some(v) = summary.remove(key) {
            summary.insert(format!("{key}_us"), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1_result_without_health_reads_as_not_judged() {
        let mut value = json!({ "result_version": 1 });
        upgrade(&mut value).unwrap();
        assert_eq!(
            value["health"],
            json!({ "valid": true, "problems": [], "stages": [] })
        );
        assert_eq!(value["result_version"], json!(RESULT_VERSION));
    }

    #[test]
    fn a_present_health_is_kept() {
        let health = json!({ "valid": false, "problems": ["slow"], "stages": [] });
        let mut value = json!({ "result_version": 1, "health": health.clone() });
        upgrade(&mut value).unwrap();
        assert_eq!(value["health"], health);
    }

    #[test]
    fn unknown_versions_and_non_results_are_refused() {
        for version in [0, u64::from(RESULT_VERSION) + 1] {
            let mut value = json!({ "result_version": version });
            assert_eq!(upgrade(&mut value), Err(Unreadable::Version(version)));
        }
        for value in [json!([1]), json!({ "result_version": "1" }), json!({})] {
            assert_eq!(upgrade(&mut value.clone()), Err(Unreadable::NoVersion));
        }
    }
    #[test]
    fn v1_names_become_v2_names() {
        let summary = json!({ "min": 1, "mean": 2.5, "stdev": 0.5, "p50": 2, "p90": 3, "p95": 3,
                              "p99": 4, "p99_9": 5, "max": 6 });
        let named = json!({ "min_us": 1, "mean_us": 2.5, "stdev_us": 0.5, "p50_us": 2,
                            "p90_us": 3, "p95_us": 3, "p99_us": 4, "p99_9_us": 5, "max_us": 6 });
        let mut value = json!({
            "result_version": 1,
            "load": { "model": "open", "connections": 50 },
            "total": { "latency_us": summary.clone(), "service_time_us": null },
            "targets": [{ "latency_us": summary.clone(),
                          "phases_us": { "connections_opened": 1, "tls_resumed": 0,
                                         "connect": { "count": 1, "min": 7, "max": 7 } } }],
            "health": { "valid": true, "problems": [], "stages": [
                { "target_from": 0.0, "target_to": 10.0, "target_unit": "requests/s",
                  "achieved_concurrency": 1.5, "lateness_us": summary } ] }
        });
        upgrade(&mut value).unwrap();
        assert_eq!(value["result_version"], json!(RESULT_VERSION));
        assert_eq!(value["total"]["latency_us"], named);
        assert_eq!(value["total"]["service_time_us"], json!(null));
        assert_eq!(value["targets"][0]["latency_us"], named);
        assert_eq!(
            value["targets"][0]["phases_us"]["connect"],
            json!({ "count": 1, "min_us": 7, "max_us": 7 })
        );
        assert_eq!(
            value["load"],
            json!({ "model": "open", "max_in_flight": 50 })
        );
        let stage = &value["health"]["stages"][0];
        assert_eq!(
            (
                &stage["level_from"],
                &stage["level_to"],
                &stage["level_unit"]
            ),
            (&json!(0.0), &json!(10.0), &json!("requests/s"))
        );
        assert_eq!(stage["achieved_in_flight"], json!(1.5));
        assert_eq!(stage["lateness_us"], named);
        assert!(stage.get("target_from").is_none());
    }

    #[test]
    fn a_closed_model_keeps_its_connections() {
        let mut value =
            json!({ "result_version": 1, "load": { "model": "closed", "connections": 8 } });
        upgrade(&mut value).unwrap();
        assert_eq!(
            value["load"],
            json!({ "model": "closed", "connections": 8 })
        );
    }
}
