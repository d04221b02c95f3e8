//! Comparing a result with a baseline result: deltas per target, and a verdict per regression
//! rule that a noisy runner cannot fool; and the gate's decision over SLOs and rules, with the
//! exit codes ([`gate`]).
//!
//! [`compare`] takes two result artifacts and nothing else: the rules are those recorded in the
//! current result (`regression_rules`; the baseline's, then the defaults, for results written
//! before rules were recorded).
//!
//! | file          | holds                                                               |
//! |---------------|---------------------------------------------------------------------|
//! | `mod.rs`      | [`compare`], [`Comparison`], [`CompareError`]                       |
//! | `rules.rs`    | rules judged: [`RuleVerdict`], [`RuleState`], `judge`, `judge_all`  |
//! | `samples.rs`  | the per-second samples a rule's interval is computed from           |
//! | `scoped.rs`   | rules of a target or a flow: their values and intervals             |
//! | `stats.rs`    | the moving-block bootstrap interval of a change                     |
//! | `between_runs.rs` | run-to-run variation from earlier results: the spread, the widening |
//! | `paired.rs`   | rules judged on paired epochs (`loadgate ab`): Hodges-Lehmann, Wilcoxon |
//! | `epochs.rs`   | the sides of `loadgate ab` compared: [`compare_paired`], [`Paired`] |
//! | `deltas.rs`   | per-target metrics and SLOs in both runs: [`TargetDelta`], [`SloDelta`] |
//! | `gate.rs`     | the decision ([`gate::Overall`]), its summary line, the exit codes  |
//!
//! # The verdict of a rule
//!
//! For a rule such as `p(95) +10% floor 2ms`, with `b` and `c` the baseline's and the current
//! run's whole-run values (e.g. their p95 from the HDR histograms):
//!
//! - the *allowed change* is `A = max(max_change × b, floor)` (10% of `b`, at least 2 ms), in the
//!   worse direction (a rise; a drop for throughput);
//! - the *interval* is the 95% bootstrap confidence interval of the change, computed from the two
//!   runs' per-second samples (`stats.rs`): for latency and throughput, of the relative change of
//!   the mean per-second value, scaled by `b`; for the error rate, of the absolute change of the
//!   pooled rate `Σ errors / Σ requests`.
//!
//! Then, in this order (`rules::judge`):
//!
//! 1. **improved** when the whole interval is better than `-A`;
//! 2. **unchanged** when the whole-run change is within the floor (never a regression);
//! 3. **inconclusive** when there is no interval (fewer than `stats::MIN_SAMPLES` seconds);
//! 4. **regressed** when the whole interval lies beyond `A` and so does the whole-run change;
//! 5. **unchanged** when the whole interval is within `A`;
//! 6. **inconclusive** otherwise: the interval straddles `A`; a longer run narrows it.
//!
//! With a stored baseline (another run, maybe on another machine), [`compare_with_history`]
//! first widens each interval by the run-to-run variation of the rule's value over earlier
//! results of the spec (`between_runs.rs`); with fewer than three, a note says the verdict
//! assumes that the two runs' machines were alike.
//!
//! Only `regressed` fails the gate. An A/A comparison (same build, same server) gives intervals
//! around 0, within `A`: unchanged. A rule of a target or a flow (`scope`) compares that
//! target's or flow's whole-run values, found by name in both results (one missing from either
//! is inconclusive, and says so); having no per-second series, its interval comes from its
//! counts and histograms (`scoped.rs`). Targets without rules are reported without a verdict.

mod between_runs;
mod deltas;
mod epochs;
pub mod gate;
pub(crate) mod paired;
mod rules;
pub(crate) mod samples;
mod scoped;
mod stats;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::regression::RegressionRule;
use crate::result::{RESULT_VERSION, RunResult};

pub(crate) use deltas::target_metrics;
pub use deltas::{MetricDelta, SloDelta, TargetDelta, TargetMetric};
pub use epochs::{MAX_DROPPED_SHARE, Paired, RuleChanges, SubRunChange, compare_paired};
pub use rules::{RuleState, RuleVerdict};
pub(crate) use stats::median;

/// Why two results cannot be compared (or merged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// The results come from specs of different `name`s.
    #[error(
        "the results come from different specs: `{baseline}` (baseline) and `{current}` \
         (current); compare results of the same spec (its `name`)"
    )]
    DifferentSpecs {
        /// The baseline's spec name.
        baseline: String,
        /// The current run's spec name.
        current: String,
    },
    /// A result of another `result_version`.
    #[error(
        "`{file}` has result_version {found}, this loadgate reads version {RESULT_VERSION}; \
         produce both results with the same loadgate major version"
    )]
    Version {
        /// The result's file, or `baseline`/`current`.
        file: String,
        /// Its `result_version`.
        found: u32,
    },
    /// A recorded regression rule that does not parse.
    #[error("a regression rule in `{file}` cannot be read: {reason}")]
    Rule {
        /// The result's file, or `baseline`/`current`.
        file: String,
        /// Why the rule does not parse.
        reason: String,
    },
}

/// The comparison of a current result with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    /// The spec's name (the same in both results).
    pub spec_name: String,
    /// The spec file changed between the runs (its SHA-256 differs).
    pub spec_changed: bool,
    /// The baseline's measurement is invalid (`health.valid` false): nothing can be concluded.
    pub baseline_invalid: bool,
    /// Things a reader should know: a changed spec, an interrupted run, where the rules came
    /// from.
    pub notes: Vec<String>,
    /// Every regression rule, judged on the whole run or on its target or flow.
    pub rules: Vec<RuleVerdict>,
    /// Every SLO of the current run, beside the baseline's value of the same threshold.
    pub slo: Vec<SloDelta>,
    /// `total` first, then the current run's targets, then targets only the baseline has.
    pub targets: Vec<TargetDelta>,
    /// The rules tested together and the false-alarm rate they share; absent when no rule
    /// was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
    /// `loadgate ab` only: the per-sub-run changes behind the paired verdicts of `rules`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<Paired>,
}

/// The rules of a comparison tested together: one false-alarm rate per run shared by all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Family {
    /// The per-run false-alarm rate the rules share (α), a fraction: 0.05.
    pub alpha: f64,
    /// Rules tested together (m); untested (inconclusive for lack of data) not counted.
    pub tested: usize,
    /// `holm` (paired sub-runs, Student t) or `max-t` (two runs, block bootstrap step-down).
    pub method: String,
}

impl Comparison {
    /// Whether any rule regressed.
    pub fn regressed(&self) -> bool {
        self.rules.iter().any(|r| r.verdict == RuleState::Regressed)
    }

    /// Number of rules with the given verdict.
    pub(crate) fn count(&self, state: RuleState) -> usize {
        self.rules.iter().filter(|r| r.verdict == state).count()
    }
}

/// Checks that `result` can be read by this loadgate.
fn check_version(result: &RunResult, file: &str) -> Result<(), CompareError> {
    if result.result_version != RESULT_VERSION {
        return Err(CompareError::Version {
            file: file.to_string(),
            found: result.result_version,
        });
    }
    Ok(())
}

/// Compares `current` with `baseline`, judging the rules on the noise within the two runs
/// alone: for two sides measured side by side (`loadgate ab` replaces the rules' verdicts with
/// paired ones). A stored baseline is compared by [`compare_with_history`]. Errors: different
/// specs (by name), an unreadable version or rule.
pub fn compare(baseline: &RunResult, current: &RunResult) -> Result<Comparison, CompareError> {
    judged(baseline, current, None)
}

/// Compares `current` with a stored `baseline`, given `history`: earlier results of the same
/// spec (e.g. the last baseline runs; the baseline and the current run are skipped if among
/// them, as are invalid measurements). Each rule's interval is widened by the run-to-run
/// variation of its value over the history and the baseline (`between_runs.rs`), and a note
/// says by how much, or, with fewer than three earlier results, that the verdict assumes the
/// two machines were alike. Errors: as [`compare`], also for a history result.
pub fn compare_with_history(
    baseline: &RunResult,
    current: &RunResult,
    history: &[RunResult],
) -> Result<Comparison, CompareError> {
    let (earlier, left_out) = between_runs::earlier_results(history, baseline, current)?;
    let mut comparison = judged(baseline, current, Some(&earlier))?;
    comparison.notes.extend(left_out);
    Ok(comparison)
}

/// The comparison, with the rules' intervals widened by the run-to-run variation over
/// `earlier` and the baseline when `earlier` is given (see [`compare_with_history`]).
fn judged(
    baseline: &RunResult,
    current: &RunResult,
    earlier: Option<&[&RunResult]>,
) -> Result<Comparison, CompareError> {
    check_version(baseline, "baseline")?;
    check_version(current, "current")?;
    if baseline.spec.name != current.spec.name {
        return Err(CompareError::DifferentSpecs {
            baseline: baseline.spec.name.clone(),
            current: current.spec.name.clone(),
        });
    }
    let mut notes = run_notes(baseline, current);
    let rules = recorded_rules(baseline, current, &mut notes)?;
    let (rules, note) = rules::judge_all(&rules, baseline, current, earlier);
    notes.extend(note);
    Ok(Comparison {
        spec_name: current.spec.name.clone(),
        spec_changed: baseline.spec.hash != current.spec.hash,
        baseline_invalid: !baseline.health.valid,
        notes,
        rules,
        slo: deltas::slo_deltas(baseline, current),
        targets: deltas::target_deltas(baseline, current),
        family: None,
        paired: None,
    })
}

/// What a reader should know about the two runs: a changed spec, an interrupted run, an
/// invalid measurement.
fn run_notes(baseline: &RunResult, current: &RunResult) -> Vec<String> {
    let mut notes = Vec::new();
    if baseline.spec.hash != current.spec.hash {
        notes.push("the spec file changed since the baseline run".to_string());
    }
    if baseline.interrupted {
        notes.push("the baseline run was interrupted: it covers part of its plan".to_string());
    }
    if current.interrupted {
        notes.push("the current run was interrupted: it covers part of its plan".to_string());
    }
    for (which, r) in [("baseline", baseline), ("current", current)] {
        if !r.health.valid {
            notes.push(format!(
                "the {which} run's measurement is invalid (the load generator fell short of the \
                 plan): {}",
                r.health.problems.join("; ")
            ));
        }
    }
    notes
}

/// The rules recorded in the current result, else in the baseline, else the defaults; a note
/// says where they came from when not from the current result.
fn recorded_rules(
    baseline: &RunResult,
    current: &RunResult,
    notes: &mut Vec<String>,
) -> Result<Vec<RegressionRule>, CompareError> {
    let (recorded, file) = match (&current.regression_rules, &baseline.regression_rules) {
        (Some(rules), _) => (rules, "current"),
        (None, Some(rules)) => {
            notes.push("regression rules taken from the baseline result".to_string());
            (rules, "baseline")
        }
        (None, None) => {
            notes.push("neither result records regression rules: default rules used".to_string());
            return Ok(rules::default_rules());
        }
    };
    recorded
        .iter()
        .map(|r| {
            r.to_rule().map_err(|reason| CompareError::Rule {
                file: file.to_string(),
                reason,
            })
        })
        .collect()
}
