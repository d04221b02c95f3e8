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
const OLDEST_VERSION: u32 = 1;

/// One upgrade step, on the result's top-level JSON object.
type Step = fn(&mut Map<String, Value>);

/// `STEPS[i]` upgrades a result of version `OLDEST_VERSION + i` to the next version; the
/// caller then sets its `result_version`.
const STEPS: [Step; (RESULT_VERSION - OLDEST_VERSION) as usize] = [];

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
}
