//! The JSON verdict: what a machine (the GitHub Action, a script) reads to decide and to
//! summarise. snake_case throughout; its JSON Schema is generated from [`VerdictDoc`]
//! (`loadgate schema verdict`, committed as `schema/verdict.schema.json`).
//!
//! Units as in the result: latencies in microseconds (`_us`), rates per second, error rates as
//! fractions (0.01 = 1%).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compare::{Comparison, RuleState, RuleVerdict, SloDelta, TargetDelta};
use crate::report::history::Trend;
use crate::result::{RunResult, TargetResult};

/// Version of the verdict format; bumped on any incompatible change.
pub const VERDICT_VERSION: u32 = 1;

/// The overall verdict and its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    /// Every SLO passed and no rule regressed: exit 0.
    Pass,
    /// At least one SLO failed: exit 1. Wins over `regressed` when both happen: an SLO is an
    /// absolute promise, a regression a relative signal; the rules are still reported.
    SloFailed,
    /// Every SLO passed, and at least one regression rule regressed: exit 4.
    Regressed,
    /// The current run's (or the baseline's) measurement is invalid (`health.valid` false:
    /// the generator did not apply the planned load): exit 5, whatever the SLOs and rules say.
    InvalidMeasurement,
}

impl Overall {
    /// The verdict of a current result and, when there is a baseline, its comparison.
    pub fn of(current: &RunResult, comparison: Option<&Comparison>) -> Overall {
        if !current.health.valid || comparison.is_some_and(|c| c.baseline_invalid) {
            Overall::InvalidMeasurement
        } else if !current.passed {
            Overall::SloFailed
        } else if comparison.is_some_and(Comparison::regressed) {
            Overall::Regressed
        } else {
            Overall::Pass
        }
    }

    /// The documented exit code: 0, 1, 4 or 5.
    pub fn exit_code(self) -> u8 {
        match self {
            Overall::Pass => 0,
            Overall::SloFailed => 1,
            Overall::Regressed => 4,
            Overall::InvalidMeasurement => 5,
        }
    }

    /// `pass`, `slo_failed`, `regressed` or `invalid_measurement`.
    pub fn name(self) -> &'static str {
        match self {
            Overall::Pass => "pass",
            Overall::SloFailed => "slo_failed",
            Overall::Regressed => "regressed",
            Overall::InvalidMeasurement => "invalid_measurement",
        }
    }
}

/// The key numbers of a run (all targets together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Headline {
    /// Complete responses per second.
    pub rps: f64,
    /// Latency percentiles, µs; absent when there were no responses.
    pub p50_us: Option<u64>,
    pub p95_us: Option<u64>,
    pub p99_us: Option<u64>,
    /// Failed requests / requests ended, a fraction.
    pub error_rate: f64,
    pub requests: u64,
}

impl Headline {
    /// The headline of a target result (usually `total`).
    pub fn of(t: &TargetResult) -> Headline {
        Headline {
            rps: t.rps,
            p50_us: t.latency_us.as_ref().map(|l| l.p50),
            p95_us: t.latency_us.as_ref().map(|l| l.p95),
            p99_us: t.latency_us.as_ref().map(|l| l.p99),
            error_rate: t.error_rate,
            requests: t.requests,
        }
    }
}

/// Identifies one result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunInfo {
    /// RFC 3339, UTC.
    pub started_at: String,
    pub duration_s: f64,
    pub interrupted: bool,
    /// Hex SHA-256 of the spec file.
    pub spec_hash: String,
    pub loadgate_version: String,
    pub headline: Headline,
}

impl RunInfo {
    fn of(r: &RunResult) -> RunInfo {
        RunInfo {
            started_at: r.started_at.clone(),
            duration_s: r.duration_s,
            interrupted: r.interrupted,
            spec_hash: r.spec.hash.clone(),
            loadgate_version: r.environment.loadgate_version.clone(),
            headline: Headline::of(&r.total),
        }
    }
}

/// How many rules ended in each state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleCounts {
    pub regressed: usize,
    pub unchanged: usize,
    pub improved: usize,
    pub inconclusive: usize,
}

/// The verdict document: `loadgate compare --format json`, `loadgate report --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "loadgate verdict")]
pub struct VerdictDoc {
    /// Version of this format: 1.
    pub verdict_version: u32,
    /// `pass`, `slo_failed` (wins over `regressed`), `regressed`, or `invalid_measurement`
    /// (wins over both).
    pub verdict: Overall,
    /// The exit code `loadgate compare` / `run --baseline` ends with: 0, 1, 4 or 5.
    pub exit_code: u8,
    /// The verdict in one line, for a human.
    pub summary: String,
    /// The spec's name.
    pub spec: String,
    pub current: RunInfo,
    /// Absent without a baseline.
    pub baseline: Option<RunInfo>,
    /// The spec file changed between the baseline and the current run.
    pub spec_changed: bool,
    /// Whether every SLO passed.
    pub slo_passed: bool,
    /// Every SLO of the current run, with the baseline's value of the same threshold.
    pub slo: Vec<SloDelta>,
    /// Whether a rule regressed (false without a baseline).
    pub regressed: bool,
    pub rule_counts: RuleCounts,
    /// Every regression rule, judged; empty without a baseline.
    pub rules: Vec<RuleVerdict>,
    /// Per-target deltas, `total` first; empty without a baseline.
    pub targets: Vec<TargetDelta>,
    /// Things to know: a changed spec, interrupted runs, where the rules came from.
    pub notes: Vec<String>,
    /// Key metrics over earlier runs and this one (`loadgate report` with several results);
    /// absent otherwise.
    pub trend: Option<Trend>,
}

/// Builds the verdict of `current`, compared with a baseline when `comparison` is given.
pub fn build(
    current: &RunResult,
    baseline: Option<&RunResult>,
    comparison: Option<&Comparison>,
    trend: Option<Trend>,
) -> VerdictDoc {
    let overall = Overall::of(current, comparison);
    let count = |s| comparison.map_or(0, |c| c.count(s));
    let slo = match comparison {
        Some(c) => c.slo.clone(),
        None => current
            .slo
            .iter()
            .map(|v| SloDelta {
                scope: v.scope.clone(),
                metric: v.metric.clone(),
                threshold: v.threshold.clone(),
                unit: v.unit.clone(),
                limit: v.limit,
                measured: v.measured,
                baseline: None,
                change: None,
                passed: v.passed,
            })
            .collect(),
    };
    VerdictDoc {
        verdict_version: VERDICT_VERSION,
        verdict: overall,
        exit_code: overall.exit_code(),
        summary: summary_line(current, comparison),
        spec: current.spec.name.clone(),
        current: RunInfo::of(current),
        baseline: baseline.map(RunInfo::of),
        spec_changed: comparison.is_some_and(|c| c.spec_changed),
        slo_passed: current.passed,
        slo,
        regressed: comparison.is_some_and(Comparison::regressed),
        rule_counts: RuleCounts {
            regressed: count(RuleState::Regressed),
            unchanged: count(RuleState::Unchanged),
            improved: count(RuleState::Improved),
            inconclusive: count(RuleState::Inconclusive),
        },
        rules: comparison.map_or_else(Vec::new, |c| c.rules.clone()),
        targets: comparison.map_or_else(Vec::new, |c| c.targets.clone()),
        notes: comparison.map_or_else(Vec::new, |c| c.notes.clone()),
        trend,
    }
}

/// The one-line verdict, e.g. `PASSED: 3/3 SLOs met; no regression (5 rules: 4 unchanged, 1
/// inconclusive)`.
pub fn summary_line(current: &RunResult, comparison: Option<&Comparison>) -> String {
    let overall = Overall::of(current, comparison);
    let total = current.slo.len();
    let failed = current.slo.iter().filter(|v| !v.passed).count();
    let slo = match (total, failed) {
        (0, _) => "no SLOs defined".to_string(),
        (n, 0) => format!("{n}/{n} SLOs met"),
        (n, f) => format!("{f} of {n} SLOs failed"),
    };
    let rules = match comparison {
        None => "no baseline to compare with".to_string(),
        Some(c) if c.rules.is_empty() => "no regression rules".to_string(),
        Some(c) => {
            let parts: Vec<String> = [
                RuleState::Regressed,
                RuleState::Inconclusive,
                RuleState::Improved,
                RuleState::Unchanged,
            ]
            .iter()
            .filter(|s| c.count(**s) > 0)
            .map(|s| format!("{} {}", c.count(*s), s.name()))
            .collect();
            let head = if c.regressed() {
                "regression found"
            } else {
                "no regression"
            };
            format!("{head} ({} rules: {})", c.rules.len(), parts.join(", "))
        }
    };
    let word = match overall {
        Overall::Pass => "PASSED",
        Overall::SloFailed => "FAILED",
        Overall::Regressed => "REGRESSED",
        Overall::InvalidMeasurement => "INVALID MEASUREMENT",
    };
    format!("{word}: {slo}; {rules}")
}

/// The JSON Schema of the verdict document.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(VerdictDoc)).expect("a schema serializes")
}
