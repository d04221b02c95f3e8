//! Scenarios: several loads at once, each with its own executor (k6's `scenarios`), as
//! written in the spec (`scenarios:`).
//!
//! ```yaml
//! scenarios:
//!   - name: browse
//!     executor: constant-arrival-rate
//!     targets: [list, item]
//!     rate: 200/s
//!     duration: 30s
//!     max_in_flight: 100
//!     tags: { kind: read }
//!   - name: checkout
//!     executor: ramping-vus
//!     flows: [checkout]
//!     start_time: 5s
//!     start_vus: 0
//!     stages:
//!       - { duration: 10s, level: 20 }
//!       - { duration: 15s, level: 20 }
//!     graceful_stop: 5s
//!     slo:
//!       latency: ["p(95) < 300ms"]
//! ```
//!
//! `docs/spec.md` maps each of k6's executor options to these fields.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{DURATION_PATTERN, RATE_PATTERN, Regression, Slo, Stage, THINK_TIME_PATTERN};

/// One scenario: which targets or flows it runs, its executor and its timing. All scenarios
/// run at the same time, each on its own schedule from the run's start (`start_time`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// Name used in reports, SLO verdicts and regression rules; unique within the spec,
    /// without `/`.
    #[schemars(length(min = 1))]
    pub(crate) name: String,
    /// How the scenario schedules its work (k6's executors): `constant-vus`, `ramping-vus`,
    /// `per-vu-iterations`, `shared-iterations` (closed model: virtual users), or
    /// `constant-arrival-rate`, `ramping-arrival-rate` (open model: arrivals on a schedule).
    pub(crate) executor: Executor,
    /// The targets (by name) it sends, chosen by weight. Give `targets` or `flows`. A target
    /// or flow belongs to one scenario.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) targets: Vec<String>,
    /// The flows (by name) whose iterations it runs, chosen by weight.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) flows: Vec<String>,
    /// Virtual users: `constant-vus`, `per-vu-iterations`, `shared-iterations` (k6's `vus`);
    /// a multiple of `load.streams` (each connection carries that many).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub(crate) vus: Option<u32>,
    /// `ramping-vus`: virtual users at the start, before the first stage (default 0); like
    /// its stages' levels, a multiple of `load.streams`.
    #[serde(default)]
    #[schemars(range(max = 100000))]
    pub(crate) start_vus: Option<u32>,
    /// `per-vu-iterations`: iterations (requests, or flow iterations) each virtual user runs;
    /// `shared-iterations`: iterations all of them share (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) iterations: Option<u64>,
    /// `constant-arrival-rate`: arrivals per second, e.g. `200/s` (k6's `rate` over
    /// `timeUnit`).
    #[serde(default)]
    #[schemars(regex(pattern = RATE_PATTERN))]
    pub(crate) rate: Option<String>,
    /// `ramping-arrival-rate`: the arrival rate at the start, before the first stage
    /// (default `0/s`).
    #[serde(default)]
    #[schemars(regex(pattern = RATE_PATTERN))]
    pub(crate) start_rate: Option<String>,
    /// Arrival-rate executors: most iterations in flight at once (k6's `maxVUs`); an
    /// arrival that finds them all busy is dropped. Default: the peak rate times one second
    /// (or the largest burst of `arrivals` over `0s`, if more), at least 16 and at most 10000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub(crate) max_in_flight: Option<u32>,
    /// `constant-vus` and `constant-arrival-rate`: how long the scenario runs.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) duration: Option<String>,
    /// `ramping-vus` and `ramping-arrival-rate`: the stages, each ramped linearly from the
    /// previous level (the first from `start_vus` or `start_rate`); a stage of `0s` changes
    /// the level at once (a spike). `ramping-vus` levels are virtual users;
    /// `ramping-arrival-rate` stages give a rate (`level: 50/s`) or a count (`arrivals: N`:
    /// spread evenly over the stage, or all at once over `0s`). No warmup stages.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) stages: Vec<Stage>,
    /// When the scenario starts, after the run's start (default `0s`; k6's `startTime`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) start_time: Option<String>,
    /// How long iterations in flight at the scenario's end may take to finish before they
    /// are cut (default `30s`; k6's `gracefulStop`). A cut iteration is not counted.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) graceful_stop: Option<String>,
    /// `per-vu-iterations` and `shared-iterations`: the longest the scenario may run before
    /// it stops with iterations left (default `10m`; k6's `maxDuration`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) max_duration: Option<String>,
    /// Closed-model executors: pause between a response (an iteration's end) and the
    /// virtual user's next request: a duration or a uniform range (`50ms..150ms`).
    #[serde(default)]
    #[schemars(regex(pattern = THINK_TIME_PATTERN))]
    pub(crate) think_time: Option<String>,
    /// Closed-model executors: each virtual user starts at most this many requests (flows:
    /// iterations) per second, on a schedule.
    #[serde(default)]
    #[schemars(regex(pattern = RATE_PATTERN))]
    pub(crate) pacing: Option<String>,
    /// Tags given to every request of the scenario (a target's, flow's or step's own tags of
    /// the same name win). `scenario: NAME` is always added.
    #[serde(default)]
    pub(crate) tags: BTreeMap<String, String>,
    /// Thresholds over the scenario's requests (and, with `{tag:value}` selectors, over
    /// those of them that carry a tag).
    #[serde(default)]
    pub(crate) slo: Slo,
    /// How much worse than the baseline the scenario's requests may get. Only the rules
    /// written apply (no defaults).
    #[serde(default)]
    pub(crate) regression: Regression,
}

/// A scenario's executor, k6's names and meanings.
// Variants without doc comments: the schema then lists them as one `enum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Executor {
    ConstantVus,
    RampingVus,
    ConstantArrivalRate,
    RampingArrivalRate,
    PerVuIterations,
    SharedIterations,
}

impl Executor {
    /// The executor's name as the spec writes it (`constant-arrival-rate`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Executor::ConstantVus => "constant-vus",
            Executor::RampingVus => "ramping-vus",
            Executor::ConstantArrivalRate => "constant-arrival-rate",
            Executor::RampingArrivalRate => "ramping-arrival-rate",
            Executor::PerVuIterations => "per-vu-iterations",
            Executor::SharedIterations => "shared-iterations",
        }
    }
}
