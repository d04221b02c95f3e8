//! The JSON verdict: what a machine (the GitHub Action, a script) reads to decide and to
//! summarise. snake_case throughout; its JSON Schema is generated from `VerdictDoc`
//! (`loadgate schema verdict`, committed as `schema/verdict.schema.json`).
//!
//! Units as in the result: latencies in microseconds (`_us`), rates per second, error rates as
//! fractions (0.01 = 1%). Beside the numbers, the engine's own formatting of them (`*_text`,
//! `display`), as its reports show them, so that a reader need not format numbers again.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::decisions::{family_sentence, format_allowed, format_mde, format_rule_level};
use super::history::Trend;
use super::scenarios::{rule_fails, rule_warns, slo_fails, slo_warns};
use super::spec_lines::{Block, SpecLines};
use super::verdict_flows::{VerdictFlow, verdict_flows};
use super::{Render, Report};
use crate::compare::gate::{Exit, Outcome, Overall, summary_line};
use crate::compare::{Comparison, Family, RuleState, RuleVerdict, SloDelta, TargetDelta};
use crate::plan::regression::ScopeKind;
use crate::plan::threshold::Severity;
use crate::result::{RunResult, ScenarioResult, TargetResult};
use crate::units::Unit;

/// Version of the verdict format; bumped on any incompatible change.
const VERDICT_VERSION: u32 = 1;

/// The JSON renderer: the verdict document, pretty-printed.
pub(super) struct Json;

impl Render for Json {
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String> {
        let input = report.input;
        let mut doc = build(
            input.current,
            input.baseline,
            input.comparison,
            report.trend.clone(),
        );
        if let Some(lines) = input
            .spec_path
            .and_then(|p| SpecLines::read(p, &input.current.spec.hash))
        {
            doc.place(&lines);
        }
        Ok(serde_json::to_string_pretty(&doc)? + "\n")
    }
}

/// The overall verdict of a result, with its baseline when there is one: the gate's decision
/// on a run that ran to its end, else `interrupted`.
// The gate's decision is `Overall`; this adds the run that was not judged. Named `Overall` in
// the schema, as before `interrupted`: the action's generated types keep their name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Overall")]
pub(crate) enum Verdict {
    /// Every SLO passed and no rule regressed: exit 0.
    Pass,
    /// At least one SLO failed: exit 1. Wins over `regressed` when both happen: an SLO is an
    /// absolute promise, a regression a relative signal; the rules are still reported.
    SloFailed,
    /// Every SLO passed, and at least one regression rule regressed: exit 4.
    Regressed,
    /// The current run's (or the baseline's) measurement is invalid (`health.valid` false:
    /// the generator did not apply the planned load), or more than half of `loadgate ab`'s
    /// sub-runs were late for the same reason: exit 5, whatever the SLOs and rules say.
    InvalidMeasurement,
    /// The current run was stopped before its end (Ctrl-C, SIGTERM: `interrupted` in the
    /// result): its numbers cover only part of the plan, so it is not judged, whatever its
    /// SLOs and rules say on that part. Exit 3, as `loadgate run` ended; wins over every
    /// other verdict.
    Interrupted,
}

impl Verdict {
    /// The verdict on `current` and, when there is a baseline, its comparison: the gate's
    /// ([`Overall`]), where a `warn` SLO that failed and a `warn` rule that regressed are
    /// warnings, which never fail it.
    pub(crate) fn of(current: &RunResult, comparison: Option<&Comparison>) -> Verdict {
        if current.interrupted {
            return Verdict::Interrupted;
        }
        match Overall::of(current, comparison) {
            Overall::InvalidMeasurement => Verdict::InvalidMeasurement,
            _ if !current.passed && current.slo.iter().any(slo_fails) => Verdict::SloFailed,
            _ if comparison.is_some_and(|c| c.rules.iter().any(rule_fails)) => Verdict::Regressed,
            _ => Verdict::Pass,
        }
    }

    /// The gate's decision, `None` for a run that was not judged (interrupted).
    fn judged(self) -> Option<Overall> {
        match self {
            Verdict::Pass => Some(Overall::Pass),
            Verdict::SloFailed => Some(Overall::SloFailed),
            Verdict::Regressed => Some(Overall::Regressed),
            Verdict::InvalidMeasurement => Some(Overall::InvalidMeasurement),
            Verdict::Interrupted => None,
        }
    }

    /// How a command that decides on it ends (`compare`, `run`).
    pub(crate) fn outcome(self) -> Outcome {
        self.judged().map_or(Outcome::Interrupted, Outcome::from)
    }

    /// The exit code of the verdict: 0, 1, 3, 4 or 5.
    pub(crate) fn exit(self) -> Exit {
        self.judged()
            .map_or(Outcome::Interrupted.exit(), Overall::exit)
    }

    /// `pass`, `slo_failed`, `regressed`, `invalid_measurement` or `interrupted`.
    pub(crate) fn name(self) -> &'static str {
        self.judged().map_or("interrupted", Overall::name)
    }

    /// The verdict as the reports' headline word: `PASSED`, `FAILED`, `REGRESSED`,
    /// `INVALID MEASUREMENT` or `INTERRUPTED`.
    pub(crate) fn word(self) -> &'static str {
        self.judged().map_or("INTERRUPTED", Overall::word)
    }
}

/// The key numbers of a run (all targets together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Headline {
    /// Complete responses per second.
    pub rps: f64,
    /// Latency p50, µs; absent when there were no responses.
    pub p50_us: Option<u64>,
    /// Latency p95, µs; absent when there were no responses.
    pub p95_us: Option<u64>,
    /// Latency p99, µs; absent when there were no responses.
    pub p99_us: Option<u64>,
    /// Failed requests / requests ended, a fraction.
    pub error_rate: f64,
    /// Requests ended (responses and transport errors).
    pub requests: u64,
    /// The same numbers formatted by the engine, as its reports show them.
    pub display: HeadlineDisplay,
}

/// The headline's numbers formatted by the engine as its reports show them; `–` for a value
/// that does not exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct HeadlineDisplay {
    /// Throughput, complete responses per second, e.g. `876.8/s`.
    pub rps: String,
    /// Latency p50 in a readable unit, e.g. `850us`, `8.40ms`, `1.20s`; `–` without responses.
    pub p50: String,
    /// Latency p95 in a readable unit, as `p50`.
    pub p95: String,
    /// Latency p99 in a readable unit, as `p50`.
    pub p99: String,
    /// Error rate as a percentage, e.g. `0.150%`.
    pub error_rate: String,
    /// Requests ended (responses and transport errors), e.g. `3511`.
    pub requests: String,
}

impl Headline {
    /// The headline of a target result (usually `total`).
    fn of(t: &TargetResult) -> Headline {
        let latency = |p: Option<u64>| Unit::Micros.format_or_missing(p.map(|us| us as f64));
        let (p50_us, p95_us, p99_us) = (
            t.latency_us.as_ref().map(|l| l.p50_us),
            t.latency_us.as_ref().map(|l| l.p95_us),
            t.latency_us.as_ref().map(|l| l.p99_us),
        );
        Headline {
            rps: t.rps,
            p50_us,
            p95_us,
            p99_us,
            error_rate: t.error_rate,
            requests: t.requests,
            display: HeadlineDisplay {
                rps: Unit::PerSecond.format(t.rps),
                p50: latency(p50_us),
                p95: latency(p95_us),
                p99: latency(p99_us),
                error_rate: Unit::Ratio.format(t.error_rate),
                requests: t.requests.to_string(),
            },
        }
    }
}

/// Identifies one result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RunInfo {
    /// When the run started: RFC 3339, UTC.
    pub started_at: String,
    /// Measured time, seconds (warmup excluded).
    pub duration_s: f64,
    /// The run was interrupted before its end.
    pub interrupted: bool,
    /// SHA-256 of the spec file's bytes, 64 lowercase hex digits.
    pub spec_hash: String,
    /// The version of loadgate that ran it.
    pub loadgate_version: String,
    /// The key numbers of the run, all targets together: throughput, p50/p95/p99, error
    /// rate, requests.
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
pub(crate) struct RuleCounts {
    /// Rules that regressed (each fails the gate).
    pub regressed: usize,
    /// Rules within their allowed change.
    pub unchanged: usize,
    /// Rules whose whole interval is better than the allowed change.
    pub improved: usize,
    /// Rules the data could not decide.
    pub inconclusive: usize,
}

/// One regression rule, judged: with its one-sided `level`, its minimum detectable effect at
/// 80% power (`mde`, `relative_mde`) and its effective allowance (`relative_allowed_change`),
/// and those formatted as the reports show them (`display`).
// Named `RuleVerdict` in the schema, as before `line`: the action's generated types keep
// their name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "RuleVerdict")]
pub(crate) struct VerdictRule {
    /// The comparison's verdict on the rule.
    #[serde(flatten)]
    pub rule: RuleVerdict,
    /// The rule's statistics formatted by the engine as its reports show them.
    pub display: RuleDisplay,
    /// The 1-based line of the rule in the spec file, when the report was given it
    /// (`--spec FILE`, the very file the run was made from); absent otherwise, and for a
    /// default rule, which the spec does not write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// A rule's statistics formatted by the engine as its reports show them; `–` for a value that
/// does not exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RuleDisplay {
    /// The one-sided level of `change_ci`'s bounds, e.g. `0.278%`; `–` when not tested.
    pub level: String,
    /// The effective allowance, e.g. `+10.0% (730us)`, `+24.0% (floor 50us)`, `-10.0%
    /// (102.8/s)` for throughput, `+0.100%` for the error rate.
    pub allowed: String,
    /// The minimum detectable effect at 80% power, e.g. `+12.3% (900us)`, `+0.210%` for the
    /// error rate; `not tested`.
    pub mde: String,
}

impl RuleDisplay {
    fn of(r: &RuleVerdict) -> RuleDisplay {
        RuleDisplay {
            level: format_rule_level(r),
            allowed: format_allowed(r),
            mde: format_mde(r),
        }
    }
}

/// The rules tested together in one comparison, sharing one false-alarm rate per run.
// Named `Family` in the schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Family")]
pub(crate) struct VerdictFamily {
    /// The comparison's family.
    #[serde(flatten)]
    pub family: Family,
    /// In words, e.g. `18 rules tested together at a 5% false-alarm rate per run (Holm)`.
    pub text: String,
}

/// One SLO threshold of the current run, with the baseline's value of it and its line in the
/// spec.
// Named `SloDelta` in the schema, as before `line`: the action's generated types keep their
// name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "SloDelta")]
pub(crate) struct VerdictSlo {
    /// The threshold, judged.
    #[serde(flatten)]
    pub slo: SloDelta,
    /// What its scope is: `total`, `target`, `flow` or `scenario` (then `scope` is the
    /// scenario's name); absent for results written before scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub scope_kind: Option<ScopeKind>,
    /// Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
    /// all of them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// `fail` (a failure fails the run) or `warn` (a failure is a warning: reported, never
    /// fails the run); `fail` when absent.
    #[serde(default, skip_serializing_if = "is_fail")]
    pub severity: Severity,
    /// The 1-based line of the threshold in the spec file, when the report was given it
    /// (`--spec FILE`, the very file the run was made from); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// One scenario of the current run: what it measured apart from the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct VerdictScenario {
    /// The scenario's `name`.
    pub name: String,
    /// Its executor, k6's name: `constant-vus`, `ramping-vus`, `constant-arrival-rate`,
    /// `ramping-arrival-rate`, `per-vu-iterations` or `shared-iterations`.
    pub executor: String,
    /// When it started measuring, seconds after the run's start (its `start_time`).
    pub start_time_s: f64,
    /// Iterations that ended: its flows' iterations, or its requests for targets.
    pub iterations: u64,
    /// Those per second of its measured window.
    pub iterations_per_s: f64,
    /// Its requests' key numbers: throughput, p50/p95/p99, error rate, requests.
    pub headline: Headline,
    /// Whether the generator applied its planned load, on its own schedule.
    pub valid: bool,
    /// Why its measurement is invalid, one sentence each; empty when valid.
    pub problems: Vec<String>,
}

impl VerdictScenario {
    fn of(s: &ScenarioResult) -> VerdictScenario {
        VerdictScenario {
            name: s.name.clone(),
            executor: s.executor.clone(),
            start_time_s: s.start_time_s,
            iterations: s.iterations,
            iterations_per_s: if s.duration_s > 0.0 {
                s.iterations as f64 / s.duration_s
            } else {
                0.0
            },
            headline: Headline::of(&s.total),
            valid: s.health.valid,
            problems: s.health.problems.clone(),
        }
    }
}

/// Whether a severity is `fail`, the default (left out of the JSON).
fn is_fail(s: &Severity) -> bool {
    *s == Severity::Fail
}

/// Whether a count is 0 (left out of the JSON).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The one-line verdict ([`summary_line`]); for a trend without a baseline (`loadgate
/// report` of several results), what the report does instead of "no baseline to compare
/// with": `PASSED: 2/2 SLOs met; trend over 3 runs (regression rules are judged against a
/// --baseline)`. An interrupted run is not judged: `INTERRUPTED: the run was stopped before
/// its end and is not judged; on the part it ran: 2/2 SLOs met; ...`.
pub(super) fn summary(
    current: &RunResult,
    comparison: Option<&Comparison>,
    earlier: usize,
) -> String {
    let mut line = summary_line(current, comparison);
    // The word is this verdict's (warnings never fail), with the warnings counted.
    let warnings = warnings(current, comparison);
    if let Some((_, rest)) = line.split_once(": ") {
        let with = match warnings {
            0 => String::new(),
            1 => " with 1 warning".to_string(),
            n => format!(" with {n} warnings"),
        };
        line = format!("{}{with}: {rest}", Verdict::of(current, comparison).word());
    }
    if comparison.is_none()
        && earlier > 0
        && let Some(head) = line.strip_suffix("no baseline to compare with")
    {
        line = format!(
            "{head}trend over {} runs (regression rules are judged against a --baseline)",
            earlier + 1
        );
    }
    if current.interrupted {
        // The gate's word (`PASSED: `) gives way: an interrupted run is not judged.
        let rest = line
            .split_once(": ")
            .map_or(line.as_str(), |(_, rest)| rest);
        line = format!(
            "{}: the run was stopped before its end and is not judged; on the part it ran: \
             {rest}",
            Verdict::Interrupted.word()
        );
    }
    line
}

/// How many checks are warnings: `warn` SLOs of `current` that failed and `warn` rules of
/// `comparison` that regressed.
pub(super) fn warnings(current: &RunResult, comparison: Option<&Comparison>) -> usize {
    current.slo.iter().filter(|v| slo_warns(v)).count()
        + comparison.map_or(0, |c| c.rules.iter().filter(|r| rule_warns(r)).count())
}

/// The verdict document: `loadgate compare --format json`, `loadgate report --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "loadgate verdict")]
pub(crate) struct VerdictDoc {
    /// Version of this format: 1 (bumped on an incompatible change).
    pub verdict_version: u32,
    /// `pass`, `slo_failed` (wins over `regressed`), `regressed`, `invalid_measurement` (wins
    /// over both), or `interrupted` (wins over all: the current run was stopped before its
    /// end, and is not judged).
    pub verdict: Verdict,
    /// The exit code `loadgate compare` / `run --baseline` ends with: 0, 1, 3 (interrupted),
    /// 4 or 5.
    pub exit_code: u8,
    /// The verdict in one line, for a human.
    pub summary: String,
    /// The spec's `name`, shared by the current run and the baseline.
    pub spec: String,
    /// The current run: when, how long, its spec's hash and its key numbers.
    pub current: RunInfo,
    /// The baseline run, as `current`; absent without a baseline.
    pub baseline: Option<RunInfo>,
    /// The spec file changed between the baseline and the current run.
    pub spec_changed: bool,
    /// Whether every SLO of the current run passed (true when it has none; `warn` SLOs do
    /// not count).
    pub slo_passed: bool,
    /// How many checks are warnings: `warn` SLOs that failed and `warn` rules that regressed
    /// (reported; they never fail the gate); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warnings: usize,
    /// Every SLO of the current run, with the baseline's value of the same threshold.
    pub slo: Vec<VerdictSlo>,
    /// Whether a rule regressed (false without a baseline).
    pub regressed: bool,
    /// How many rules ended in each state (all 0 without a baseline).
    pub rule_counts: RuleCounts,
    /// The rules tested together at one false-alarm rate per run: how many, at what rate, by
    /// which method; absent without a baseline, or when no rule was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<VerdictFamily>,
    /// Every regression rule, judged; empty without a baseline.
    pub rules: Vec<VerdictRule>,
    /// Per-target deltas, `total` first; empty without a baseline.
    pub targets: Vec<TargetDelta>,
    /// The current run's flows, in the spec's order; absent (empty) without flows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<VerdictFlow>,
    /// The current run's scenarios, in the spec's order; absent (empty) for a spec with one
    /// `load`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<VerdictScenario>,
    /// Things to know: a changed spec, interrupted runs, where the rules came from.
    pub notes: Vec<String>,
    /// Key metrics over earlier runs and this one (`loadgate report` with several results);
    /// absent otherwise.
    pub trend: Option<Trend>,
}

/// Builds the verdict of `current`, compared with a baseline when `comparison` is given.
pub(crate) fn build(
    current: &RunResult,
    baseline: Option<&RunResult>,
    comparison: Option<&Comparison>,
    trend: Option<Trend>,
) -> VerdictDoc {
    let verdict = Verdict::of(current, comparison);
    let count = |s| comparison.map_or(0, |c| c.count(s));
    let slo = match comparison {
        Some(c) => c.slo.clone(),
        None => current.slo.iter().map(|v| SloDelta::of(v, None)).collect(),
    };
    let slo = slo
        .into_iter()
        .zip(&current.slo)
        .map(|(slo, v)| VerdictSlo {
            slo,
            scope_kind: v.scope_kind,
            tags: v.tags.clone(),
            severity: v.severity,
            line: None,
        })
        .collect();
    VerdictDoc {
        verdict_version: VERDICT_VERSION,
        verdict,
        exit_code: verdict.exit().code(),
        summary: summary(
            current,
            comparison,
            trend.as_ref().map_or(0, |t| t.runs.len().saturating_sub(1)),
        ),
        spec: current.spec.name.clone(),
        current: RunInfo::of(current),
        baseline: baseline.map(RunInfo::of),
        spec_changed: comparison.is_some_and(|c| c.spec_changed),
        slo_passed: current.passed,
        warnings: warnings(current, comparison),
        slo,
        regressed: comparison.is_some_and(Comparison::regressed),
        rule_counts: RuleCounts {
            regressed: count(RuleState::Regressed),
            unchanged: count(RuleState::Unchanged),
            improved: count(RuleState::Improved),
            inconclusive: count(RuleState::Inconclusive),
        },
        family: comparison.and_then(|c| {
            c.family.clone().map(|family| VerdictFamily {
                family,
                text: family_sentence(c),
            })
        }),
        rules: comparison.map_or_else(Vec::new, |c| {
            c.rules
                .iter()
                .map(|r| VerdictRule {
                    display: RuleDisplay::of(r),
                    rule: r.clone(),
                    line: None,
                })
                .collect()
        }),
        targets: comparison.map_or_else(Vec::new, |c| c.targets.clone()),
        flows: verdict_flows(current),
        scenarios: current.scenarios.iter().map(VerdictScenario::of).collect(),
        notes: comparison.map_or_else(Vec::new, |c| c.notes.clone()),
        trend,
    }
}

impl VerdictDoc {
    /// Gives each SLO threshold and regression rule its line in the spec.
    fn place(&mut self, lines: &SpecLines) {
        for s in &mut self.slo {
            s.line = lines.line(Block::Slo, &s.slo.scope, s.slo.metric, &s.slo.threshold);
        }
        for r in &mut self.rules {
            let rule = &r.rule;
            r.line = lines.line(Block::Regression, &rule.scope, rule.metric, &rule.rule);
        }
    }
}

/// The JSON Schema of the verdict document.
pub fn schema() -> serde_json::Value {
    crate::result::published_schema::<VerdictDoc>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::RuleState;

    /// A result as this loadgate writes it: two targets, two SLOs that pass, five rules.
    fn fixture() -> RunResult {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        crate::result::read(std::path::Path::new(path)).unwrap()
    }

    #[test]
    fn a_failed_warn_slo_is_a_warning_and_never_fails_the_run() {
        let mut r = fixture();
        r.slo[0].passed = false;
        r.slo[0].severity = Severity::Warn;
        // Whatever `passed` says: a warn threshold never fails the verdict.
        for passed in [true, false] {
            r.passed = passed;
            assert_eq!(Verdict::of(&r, None), Verdict::Pass);
        }
        assert_eq!(warnings(&r, None), 1);
        let line = summary(&r, None, 0);
        assert!(line.starts_with("PASSED with 1 warning: "), "{line}");
        r.slo[1].passed = false;
        r.passed = false;
        assert_eq!(Verdict::of(&r, None), Verdict::SloFailed);
        let line = summary(&r, None, 0);
        assert!(line.starts_with("FAILED with 1 warning: "), "{line}");
        let doc = build(&r, None, None, None);
        assert_eq!((doc.warnings, doc.exit_code), (1, 1));
        assert_eq!(doc.slo[0].severity, Severity::Warn);
    }

    #[test]
    fn a_regressed_warn_rule_is_a_warning_and_the_comparison_passes() {
        let r = fixture();
        let mut c = crate::compare::compare(&r, &r).unwrap();
        c.rules[0].verdict = RuleState::Regressed;
        c.rules[0].severity = Severity::Warn;
        assert_eq!(Verdict::of(&r, Some(&c)), Verdict::Pass);
        assert_eq!(Verdict::of(&r, Some(&c)).exit().code(), 0);
        let doc = build(&r, Some(&r), Some(&c), None);
        assert_eq!((doc.verdict, doc.warnings), (Verdict::Pass, 1));
        assert!(
            doc.summary.starts_with("PASSED with 1 warning: "),
            "{}",
            doc.summary
        );
        c.rules[1].verdict = RuleState::Regressed;
        assert_eq!(Verdict::of(&r, Some(&c)), Verdict::Regressed);
    }
}
