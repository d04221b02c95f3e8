//! Flows in the result: each flow's iterations (how many, how fast, how long, why those that
//! failed did) and its steps, whose requests are measured as targets of their own.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::summary::summary;
use super::{LatencySummary, TargetResult, encode_histogram};
use crate::measure::{ErrorKind, FlowStats, IterationFailure, rate};
use crate::plan::Plan;
use crate::plan::flow::FlowPlan;

/// What one flow's iterations measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowResult {
    /// The flow's `name`.
    pub name: String,
    /// The flow's tags (its scenario's merged); absent when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// Its share of iterations, relative to the other flows' weights.
    pub weight: u32,
    /// Its steps, in order; each is measured as the target it names.
    pub steps: Vec<FlowStep>,
    /// Iterations that ended, passed or failed.
    pub iterations: u64,
    /// Iterations whose every step passed.
    pub passed: u64,
    /// Iterations that failed.
    pub failed: u64,
    /// Iterations that ended per second of the measured window.
    pub iterations_per_s: f64,
    /// Failed iterations by the reason of their first failure: `request` (a transport error or
    /// an unexpected status), `check`, `extraction` (an extractor found nothing and had no
    /// default), `missing_variable` (a step used a variable without a value; its request was
    /// not sent). Reasons with no iteration are left out.
    pub failed_by_reason: BTreeMap<String, u64>,
    /// Iterations failed for `request`, by the request's error kind (the kinds of a target's
    /// `errors_by_kind`).
    pub failed_requests_by_kind: BTreeMap<String, u64>,
    /// Iteration duration, microseconds: from when the iteration was due (open model: its
    /// arrival on the schedule; closed model: its start) to the end of its last step, think
    /// times included (k6's `iteration_duration`); absent when no iteration ended.
    pub duration_us: Option<LatencySummary>,
    /// The iteration-duration histogram: HdrHistogram V2 + DEFLATE, base64 (standard), as a
    /// target's `histogram`.
    pub histogram: String,
}

/// One step of a flow, as the reports show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowStep {
    /// The name of the target that measures the step's requests (`flow/step`).
    pub target: String,
    /// The step's `group`, for reports; absent when the spec gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

impl FlowResult {
    /// Failed iterations as a fraction of those that ended (0.01 = 1%); 0 without iterations.
    pub fn failed_rate(&self) -> f64 {
        if self.iterations > 0 {
            self.failed as f64 / self.iterations as f64
        } else {
            0.0
        }
    }

    /// The flow's iterations in the shape of a target's measures, for what judges both alike
    /// (SLOs, regression rules): `requests` and `responses` are the iterations, `errors` the
    /// failed ones, `rps` the iterations per second, the latency the iteration duration.
    pub(crate) fn as_target(&self) -> TargetResult {
        TargetResult {
            name: self.name.clone(),
            requests: self.iterations,
            responses: self.iterations,
            errors: self.failed,
            error_rate: self.failed_rate(),
            rps: self.iterations_per_s,
            errors_by_kind: self.failed_requests_by_kind.clone(),
            latency_us: self.duration_us.clone(),
            histogram: self.histogram.clone(),
            ..Default::default()
        }
    }
}

/// Per flow, in the plan's order: its steps (from the plan) and its iterations' measures
/// (from the run's `FlowStats`) over `elapsed_s` seconds.
pub(super) fn flows(plan: &Plan, stats: &[FlowStats], elapsed_s: f64) -> Vec<FlowResult> {
    let target_name = |i: usize| plan.targets[i].name.clone();
    plan.flows
        .iter()
        .zip(stats)
        .map(|(flow, stats)| flow_result(flow, &target_name, stats, elapsed_s))
        .collect()
}

/// One flow's result; `target_name(i)`: the name of the plan's target `i`.
fn flow_result(
    flow: &FlowPlan,
    target_name: &dyn Fn(usize) -> String,
    stats: &FlowStats,
    elapsed_s: f64,
) -> FlowResult {
    let steps = flow
        .steps
        .iter()
        .map(|step| FlowStep {
            target: target_name(step.target),
            group: step.group.clone(),
        })
        .collect();
    let failed_by_reason = IterationFailure::ALL
        .iter()
        .zip(stats.failed)
        .filter(|(_, n)| *n > 0)
        .map(|(reason, n)| (reason.name().to_string(), n))
        .collect();
    let failed_requests_by_kind = ErrorKind::ALL
        .iter()
        .zip(stats.failed_requests)
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| (kind.name().to_string(), n))
        .collect();
    FlowResult {
        tags: flow.tags.clone(),
        name: flow.name.clone(),
        weight: flow.weight,
        steps,
        iterations: stats.iterations(),
        passed: stats.passed,
        failed: stats.failed_count(),
        iterations_per_s: rate(stats.iterations(), elapsed_s),
        failed_by_reason,
        failed_requests_by_kind,
        duration_us: summary(&stats.duration_us),
        histogram: encode_histogram(&stats.duration_us),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::decode_histogram;

    fn stats(durations_us: &[u64], failures: &[IterationFailure]) -> FlowStats {
        let mut s = FlowStats::default();
        for &d in durations_us {
            s.record(d, None);
        }
        for &f in failures {
            let kind = (f == IterationFailure::Request).then_some(ErrorKind::Timeout);
            s.record(9_000, Some((f, kind)));
        }
        s
    }

    #[test]
    fn a_flows_result_counts_its_iterations_by_reason_and_kind() {
        use crate::plan::flow::{OnError, RequestTemplate, StepPlan};
        let step = |target: usize, group: Option<&str>| StepPlan {
            target,
            url: url::Url::parse("http://127.0.0.1:1/").unwrap(),
            template: RequestTemplate {
                head: Vec::new(),
                body: Vec::new(),
                content_length: false,
            },
            extract: Vec::new(),
            think_time: None,
            group: group.map(String::from),
        };
        let plan = FlowPlan {
            name: "shop".into(),
            weight: 3,
            steps: vec![step(2, Some("auth")), step(3, None)],
            on_error: OnError::NextIteration,
            cookies: true,
            data: None,
            vars: Vec::new(),
            tags: Default::default(),
        };
        let s = stats(
            &[10_000, 20_000, 30_000],
            &[IterationFailure::Request, IterationFailure::MissingVariable],
        );
        let names = |i: usize| format!("shop/s{i}");
        let r = flow_result(&plan, &names, &s, 2.0);
        assert_eq!((r.name.as_str(), r.weight), ("shop", 3));
        assert_eq!(
            r.steps,
            vec![
                FlowStep {
                    target: "shop/s2".into(),
                    group: Some("auth".into())
                },
                FlowStep {
                    target: "shop/s3".into(),
                    group: None
                },
            ]
        );
        assert_eq!((r.iterations, r.passed, r.failed), (5, 3, 2));
        assert!((r.iterations_per_s - 2.5).abs() < 1e-12);
        assert_eq!(
            r.failed_by_reason,
            BTreeMap::from([("missing_variable".into(), 1), ("request".into(), 1)])
        );
        assert_eq!(
            r.failed_requests_by_kind,
            BTreeMap::from([("timeout".into(), 1)])
        );
        let d = r.duration_us.unwrap();
        assert_eq!(d.p50_us, s.duration_us.value_at_quantile(0.5));
        assert_eq!(decode_histogram(&r.histogram).unwrap().len(), 5);
    }
}
