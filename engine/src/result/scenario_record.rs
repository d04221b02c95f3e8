//! A scenario's part of the result artifact ([`ScenarioResult`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Health, LoadInfo, TargetResult, TimeSample};

/// What one scenario measured: its requests (or flow iterations) apart from the others', and
/// the generator's health on its own schedule.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioResult {
    /// The scenario's `name`.
    pub name: String,
    /// Its executor, k6's name: `constant-vus`, `ramping-vus`, `constant-arrival-rate`,
    /// `ramping-arrival-rate`, `per-vu-iterations` or `shared-iterations`.
    pub executor: String,
    /// When it started measuring, seconds after the run's `started_at` (its `start_time`).
    pub start_time_s: f64,
    /// Its tags (`scenario: NAME` included).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// The load it applied, as the run's `load`.
    pub load: LoadInfo,
    /// Length of its measured window in seconds, as the run's `duration_s`.
    pub duration_s: f64,
    /// All its requests together (named after the scenario), measured over its window.
    pub total: TargetResult,
    /// Its targets' names (in the run's `targets`; a flow's steps are `flow/step`).
    pub targets: Vec<String>,
    /// Its flows' names (in the run's `flows`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<String>,
    /// Iterations that ended: its flows' iterations, or its requests for targets.
    pub iterations: u64,
    /// Its seconds, as the run's `time_series`, from its own start.
    pub time_series: Vec<TimeSample>,
    /// Whether the generator applied its planned load, on its own schedule.
    pub health: Health,
}
