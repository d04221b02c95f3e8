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
//! | `rules.rs`    | rules judged as one family: [`RuleVerdict`], [`RuleState`], `decide_all` |
//! | `scale.rs`    | the worse-is-positive scale of a rule, and back to its unit         |
//! | `scoped.rs`   | what a rule looks at: its scope (target, flow, scenario), its tags  |
//! | `seconds.rs`  | a scope's per-second histograms and counts, merged as resampled     |
//! | `two_run.rs`  | two runs: each rule's test from the block bootstrap of seconds      |
//! | `between_runs.rs` | a stored baseline: each rule against the level of its comparable history |
//! | `paired.rs`   | the sub-runs of `loadgate ab`: [`compare_paired`], [`Paired`]       |
//! | `deltas.rs`   | per-target metrics and SLOs in both runs: [`TargetDelta`], [`SloDelta`] |
//! | `gate.rs`     | the decision ([`gate::Overall`]), its summary line, the exit codes  |
//!
//! # The verdict of a rule
//!
//! Every regression rule of every scope (the whole run, a target or flow step, a flow, a
//! scenario), with or without a tag selector, is one test. For a rule such as `p(95) +10% floor 2ms`, with `b` and `c` the baseline's and the
//! current run's whole-run values (their p95 from the HDR histograms):
//!
//! - the *allowed change* is `A = max(max_change × b, floor)` (10% of `b`, at least 2 ms), in the
//!   worse direction (a rise; a drop for throughput); `A/b` is the *effective allowance*, which
//!   the reports show;
//! - the change and the allowance are put on a scale where worse is positive (`scale.rs`):
//!   `d = ln(c/b)` and `a = ln(1 + A/b)` for latency, `−ln(c/b)` and `−ln(1 − A/b)` for
//!   throughput, `c − b` and `A` for the error rate;
//! - each rule tests `H0: d ≤ a` (within the allowance) against "regressed". One per-run
//!   false-alarm rate α (`regression.alpha`, 5% by default, recorded in the result as
//!   `regression_alpha`) is shared by all the rules tested in a comparison (the family,
//!   [`Family`]), so that an unchanged build fails the gate on any rule with probability at
//!   most α (`stats::decide`):
//!   - two runs (`compare`, `run --baseline`; `two_run.rs`): a circular block bootstrap of each
//!     run's seconds, one set of resampled seconds per run shared by all rules, each rule's
//!     statistic read from its scope's merged per-second histograms; the max-T step-down on the
//!     studentized replicates (Westfall & Young 1993; Romano & Wolf 2005). Runs shorter than
//!     `stats::MIN_SECONDS` complete seconds are too short to judge;
//!   - the sub-runs of `loadgate ab` (`paired.rs`): per rule, the change in each sub-run, the
//!     sides' positions swapped from one to the next; Student t across the sub-runs (Kalibera &
//!     Jones 2013; Bulej et al. 2020) and Holm's step-down (Holm 1979).
//!
//! Each rule's interval `[low, high]` is at its one-sided `level` (the step of the step-down
//! that decided it), and then, in this order (`rules::decide_all`):
//!
//! 1. **regressed** when `low > a`: the step-down rejected `H0`;
//! 2. **improved** when `high < −a`;
//! 3. **unchanged** when `high ≤ a` (two one-sided tests: Schuirmann 1987; Lakens 2017);
//! 4. **inconclusive** otherwise (the interval reaches beyond the allowance: a longer run
//!    narrows it), and when the rule could not be tested (runs too short, too few sub-runs, no
//!    responses on a side, a scope missing from a result); untested rules are not in the family
//!    and cannot fail the gate.
//!
//! Each tested rule also states its minimum detectable effect at 80% power at its level,
//! `mde = a + (q(1 − level) + q(0.8))·se` (Bloom 1995), in its unit and relative.
//!
//! With a stored baseline and its history (`compare --baseline-history`),
//! [`compare_with_history`] judges each rule against the level of the comparable results since
//! their last change point instead, by a prediction bound and Holm's step-down
//! (`between_runs.rs`); a rule with fewer than 5 such results is inconclusive. Without history,
//! a note says the verdict assumes that the two runs' machines were alike.
//!
//! Only `regressed` fails the gate, and only for a rule of severity `fail` (the default). A
//! rule of severity `warn` that regressed keeps its verdict, `regressed`, and is a warning
//! ([`Comparison::warnings`]): the reports show it, the gate passes (github-action-benchmark's
//! alert and fail thresholds: small regressions warn, large ones block). Warn rules are tested
//! in the same family as the others: the family's α is one false-alarm rate per run over every
//! rule tested, whatever it does on a regression, so adding warn rules makes each rule's
//! level stricter, as any rule does, and a warning is as unlikely by chance as a failure.
//!
//! What a rule looks at (`scoped.rs`): the whole run; a target (plain, or a flow's step) or a
//! flow, found by name in both results (one missing from either is inconclusive, and says so);
//! a scenario (`RunResult::scenarios`, its `total` and its seconds, on the run's clock by its
//! start). A rule with tags (`latency{kind:write}`) is judged on the exact sum of its scope's
//! targets whose tags hold every pair of the selector (histograms added, per-second series
//! merged: `result::merge::sum_targets`), in each run; a selector that matches no target in
//! either run is inconclusive, saying so. A flow's iterations have no per-second series, so
//! between two runs its rules are inconclusive and `loadgate ab` judges them. Targets without
//! rules are reported without a verdict.

mod between_runs;
mod deltas;
pub mod gate;
mod paired;
mod rules;
mod scale;
mod scoped;
mod seconds;
#[cfg(test)]
mod test_seconds;
mod two_run;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::regression::RegressionRule;
use crate::plan::threshold::Severity;
use crate::result::{RESULT_VERSION, RunResult};

pub(crate) use deltas::target_metrics;
pub use deltas::{MetricDelta, SloDelta, TargetDelta, TargetMetric};
pub use paired::{MAX_LATE_SHARE, Paired, RuleChanges, SubRunChange, compare_paired};
pub use rules::{RuleState, RuleVerdict};

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
    /// `holm` (paired sub-runs, or a stored history: Student t) or `max-t` (two runs, block
    /// bootstrap step-down).
    pub method: String,
}

impl Comparison {
    /// Whether a rule of severity `fail` regressed: what fails the gate (exit 4). A `warn`
    /// rule that regressed is a warning ([`Comparison::warnings`]) and never fails it.
    pub fn regressed(&self) -> bool {
        self.rules
            .iter()
            .any(|r| r.verdict == RuleState::Regressed && r.severity == Severity::Fail)
    }

    /// The warnings: rules of severity `warn` that regressed (their verdict stays
    /// `regressed`), which the reports show as warnings ("2 warnings") and which never fail the
    /// gate.
    pub fn warnings(&self) -> usize {
        self.rules
            .iter()
            .filter(|r| r.verdict == RuleState::Regressed && r.severity == Severity::Warn)
            .count()
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
/// alone (`two_run.rs`). A stored baseline is compared by [`compare_with_history`], the two
/// sides of `loadgate ab` by [`compare_paired`]. Errors: different specs (by name), an
/// unreadable version or rule.
pub fn compare(baseline: &RunResult, current: &RunResult) -> Result<Comparison, CompareError> {
    judged(baseline, current)
}

/// Compares `current` with a stored `baseline`, given `history`: earlier results (e.g. a
/// history folder, `loadgate history`). Without history, the two runs alone
/// ([`compare`]), with a note that the verdict assumes their machines were alike. With it, each
/// rule is judged against the level of the comparable results since their last change point
/// (`between_runs.rs`); a rule with fewer than 5 of them is inconclusive, saying how many more
/// are needed. Errors: as [`compare`] (a history result that is not comparable is left out,
/// and a note says so).
pub fn compare_with_history(
    baseline: &RunResult,
    current: &RunResult,
    history: &[RunResult],
) -> Result<Comparison, CompareError> {
    let (mut comparison, rules) = unjudged(baseline, current)?;
    let alpha = current.regression_alpha;
    if history.is_empty() {
        let tests = two_run::tests(&rules, baseline, current);
        comparison.notes.push(ALIKE.to_string());
        (comparison.rules, comparison.family) =
            rules::decide_all(alpha, &rules, &tests, rules::Method::MaxT);
        return Ok(comparison);
    }
    let comparable = between_runs::comparable(history, baseline, current);
    let within = two_run::tests(&rules, baseline, current);
    let (tests, note) = between_runs::tests(&rules, &comparable, current, &within);
    comparison.notes.push(note);
    comparison.notes.extend(comparable.left_out);
    (comparison.rules, comparison.family) =
        rules::decide_all(alpha, &rules, &tests, rules::Method::Holm);
    Ok(comparison)
}

/// The note of a comparison of two runs with no history.
const ALIKE: &str = "the verdict assumes that the baseline's machine and this run's were alike: \
                     the intervals cover the noise within each run, not between runs; pass \
                     earlier results of the baseline's branch (5 or more of this runner type) to \
                     `compare --baseline-history` to judge against their level instead";

/// The comparison of two runs, the rules judged from their seconds (see [`compare`]).
fn judged(baseline: &RunResult, current: &RunResult) -> Result<Comparison, CompareError> {
    let (mut comparison, rules) = unjudged(baseline, current)?;
    let tests = two_run::tests(&rules, baseline, current);
    let alpha = current.regression_alpha;
    (comparison.rules, comparison.family) =
        rules::decide_all(alpha, &rules, &tests, rules::Method::MaxT);
    Ok(comparison)
}

/// The comparison of `current` with `baseline` without the rules' verdicts, and the rules to
/// judge. Errors: as [`compare`].
fn unjudged(
    baseline: &RunResult,
    current: &RunResult,
) -> Result<(Comparison, Vec<RegressionRule>), CompareError> {
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
    let comparison = Comparison {
        spec_name: current.spec.name.clone(),
        spec_changed: baseline.spec.hash != current.spec.hash,
        baseline_invalid: !baseline.health.valid,
        notes,
        rules: Vec::new(),
        slo: deltas::slo_deltas(baseline, current),
        targets: deltas::target_deltas(baseline, current),
        family: None,
        paired: None,
    };
    Ok((comparison, rules))
}

/// The median of `values` (statrs); NaN when empty.
pub(crate) fn median(values: &[f64]) -> f64 {
    use statrs::statistics::{Data, OrderStatistics};
    Data::new(values.to_vec()).median()
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
