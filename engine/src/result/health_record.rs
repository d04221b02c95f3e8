//! The load generator's health as the result artifact records it (judged in `health.rs`):
//! per stage the planned load against the achieved, the limits applied, the generator's
//! shortfalls that make a measurement invalid, and the load the server did not take.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::LatencySummary;

/// The load generator's own health over the run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    /// False when the generator fell short of the plan (see `problems`): the numbers measure
    /// the generator, not the service.
    pub valid: bool,
    /// Why the measurement is invalid, one sentence each: the generator's own shortfalls (its
    /// CPU, its lateness, its file descriptors, arrivals it dropped while behind).
    pub problems: Vec<String>,
    /// What fell short of the plan because of the server, one sentence each: the load was
    /// applied and the server could not keep up (arrivals dropped while every in-flight slot
    /// waited on it, counted as failed requests by the whole run's `errors` SLOs). They do not
    /// make the measurement invalid. Absent in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The limits the stages were judged against (`load.health`, else the defaults); absent
    /// in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<HealthLimitsResult>,
    /// Per stage of the load, warmup stages included.
    pub stages: Vec<StageHealth>,
}

/// The limits past which a measured stage (of at least 1 s) is an invalid measurement.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct HealthLimitsResult {
    /// Requests may start at most this late after they were due, at p99, microseconds
    /// (`load.health.late_p99`; open model and pacing).
    pub late_p99_us: u64,
    /// At most this share of a stage's due arrivals may be dropped while the generator was
    /// behind its schedule, a fraction (`load.health.dropped`; open model).
    pub dropped_behind_share: f64,
    /// Open model: the arrivals taken (sent or dropped) may fall short of the planned rate by
    /// at most this fraction.
    pub rate_shortfall: f64,
    /// loadgate may use at most this share of all CPUs, a fraction.
    pub client_cpu_share: f64,
}

/// Planned against achieved load in one stage.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StageHealth {
    /// A warmup stage (not measured).
    pub warmup: bool,
    /// Planned length in seconds; absent for a count-mode run's open-ended stage.
    pub duration_s: Option<f64>,
    /// The stage's level at its start: connections (closed model) or arrivals per second
    /// (open model), see `level_unit`.
    pub level_from: f64,
    /// The stage's level at its end, in `level_unit`.
    pub level_to: f64,
    /// `connections` or `requests/s`.
    pub level_unit: String,
    /// Requests started (due in this stage).
    pub sent: u64,
    /// Arrivals (open model) or paced requests not sent because every in-flight slot (every
    /// paced connection) was busy.
    pub dropped: u64,
    /// Of `dropped`, those dropped while the generator was itself behind its schedule by more
    /// than `limits.late_p99_us`: the generator's; the rest waited on the server. Absent in
    /// older results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_behind: u64,
    /// Requests started per second of the stage (as run).
    pub achieved_rate: f64,
    /// Mean requests in flight over the stage (as run).
    pub achieved_in_flight: f64,
    /// How late requests started after they were due, microseconds (open model and pacing).
    pub lateness_us: Option<LatencySummary>,
    /// CPU time loadgate used in the stage (user + system), seconds.
    pub client_cpu_s: f64,
}

/// Whether a count is zero (left out of the JSON).
pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}
