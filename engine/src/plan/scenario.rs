//! Scenarios: several loads at once, each with its own executor (`spec::Scenario`), each
//! resolved into a plan of its own that the run starts at its `start_time`.

use std::time::Duration;

use super::Plan;
use super::tags::Tags;
use crate::spec::Executor;

/// One scenario, resolved.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioPlan {
    /// The scenario's `name`, unique within the spec.
    pub(crate) name: String,
    /// Its executor, as the spec names it (the load below is what it means).
    pub(crate) executor: Executor,
    /// When it starts, after the run's time zero.
    pub(crate) start_time: Duration,
    /// Its tags (`scenario: NAME` included), already merged into its targets' tags.
    pub(crate) tags: Tags,
    /// Index in the whole run's `Plan::targets` of each of its targets, in order: its own
    /// plan's target `i` is the run's target `targets[i]`.
    pub(crate) targets: Vec<usize>,
    /// Index in the whole run's `Plan::flows` of each of its flows, in order.
    pub(crate) flows: Vec<usize>,
    /// Its own plan: its targets and flows only, its load (executor, stages, `graceful_stop`,
    /// `max_duration` in `LoadPlan`), the thresholds and regression rules over its requests
    /// (`Scope::Total` there is the scenario's requests; its targets' and flows' own), no
    /// service (the whole run's starts once), `scenarios` empty.
    pub(crate) plan: Plan,
}
