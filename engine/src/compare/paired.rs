//! The comparison of the two sides of `loadgate ab` ([`AbResult`]): each regression rule judged
//! across the sub-runs, in which both sides were loaded at the same time with their positions
//! swapped from one sub-run to the next, instead of as two separate runs.
//!
//! # Method
//!
//! For a rule and a sub-run `k` that is not late, `x_k` is the change of the rule's value (its
//! scope found by name in each side's result of the sub-run) on the rule's worse-is-positive
//! scale (`scale.rs`), e.g. `ln(candidate / baseline)` of the sub-run's p(95). The sub-runs are
//! the unit: the estimate is the mean of the `x_k`, its standard error `s/√R`, and the reference
//! distribution Student's t with `R − 1` degrees of freedom (`stats::across_sub_runs`; Kalibera
//! & Jones, "Rigorous Benchmarking in Reasonable Time", 2013; Bulej et al., "Duet
//! Benchmarking", ICPE 2020). As each side holds each position in half of the sub-runs, an
//! offset of the position (which side started first) cancels in the mean and shows in the
//! spread. The allowance is taken from the baseline side's whole value. All tested rules are
//! one family, decided by Holm's step-down on their one-sided p-values (Holm 1979).
//!
//! Sub-runs where the generator fell behind on a side (`late`) are left out and counted; with
//! fewer than `stats::MIN_SUB_RUNS` sub-runs with a value on both sides a rule is inconclusive.
//! More than [`MAX_LATE_SHARE`] of the sub-runs late make the measurement invalid (exit 5).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rules::{self, Method, RuleTest, prepared, whole_run_value};
use super::scale::Scale;
use super::scoped::{missing_reason, scoped};
use super::{CompareError, Comparison};
use crate::plan::regression::RegressionRule;
use crate::result::ab::{AbResult, SubRun};
use crate::stats;

/// The per-sub-run changes behind the paired verdicts, for the reports' chart: one series per
/// regression rule, in the order of [`Comparison::rules`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Paired {
    /// How the sides were loaded: `duet`.
    pub mode: String,
    /// Sub-runs judged (not late).
    pub sub_runs: usize,
    /// Sub-runs left out because the generator fell behind on a side (more than 1% of its
    /// requests started over 10 ms late). When they are more than [`MAX_LATE_SHARE`] of all,
    /// the measurement is invalid (exit 5).
    pub late: usize,
    /// Per rule, in the order of the comparison's `rules`.
    pub rules: Vec<RuleChanges>,
}

/// The share of sub-runs that may be late (the generator behind on either side) before the
/// paired measurement as a whole is invalid: a half.
pub const MAX_LATE_SHARE: f64 = 0.5;

impl Paired {
    /// More than [`MAX_LATE_SHARE`] of the sub-runs were late: the generator did not apply the
    /// planned load for long enough to judge (an invalid measurement).
    pub fn too_many_late(&self) -> bool {
        self.late as f64 > MAX_LATE_SHARE * (self.sub_runs + self.late) as f64
    }
}

/// One rule's change in each sub-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleChanges {
    /// The rule as written, e.g. `p(95) +10% floor 2ms` (the verdict's `rule`).
    pub rule: String,
    /// `true`: `change` is relative, `candidate / baseline − 1` (latency, throughput);
    /// `false`: absolute, `candidate − baseline` (the error rate, a fraction).
    pub relative: bool,
    /// One per sub-run judged where both sides have a value, in the order they ran.
    pub changes: Vec<SubRunChange>,
}

/// One sub-run's change of a rule's metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubRunChange {
    /// The sub-run's index, 0-based in the order they ran.
    pub sub_run: u32,
    /// The baseline held the first position in this sub-run.
    pub baseline_first: bool,
    /// The change, relative or absolute as [`RuleChanges::relative`] says.
    pub change: f64,
}

/// The two sides of `ab` compared as [`super::compare`] compares two results (deltas, SLOs,
/// notes), with the rules judged across the sub-runs (see the module documentation), a note on
/// the sub-runs, and the per-sub-run changes. Errors: as [`super::compare`].
pub fn compare_paired(ab: &AbResult) -> Result<Comparison, CompareError> {
    let (mut comparison, rules) = super::unjudged(&ab.baseline, &ab.candidate)?;
    let used: Vec<&SubRun> = ab.sub_runs.iter().filter(|s| !s.late).collect();
    let late = ab.sub_runs.len() - used.len();
    let (tests, changes): (Vec<RuleTest>, Vec<RuleChanges>) =
        rules.iter().map(|rule| rule_test(rule, ab, &used)).unzip();
    let alpha = ab.candidate.regression_alpha;
    (comparison.rules, comparison.family) = rules::decide_all(alpha, &rules, &tests, Method::Holm);
    comparison.notes.push(note(ab, used.len(), late));
    comparison.notes.extend(ab.saturation_note());
    comparison.paired = Some(Paired {
        mode: ab.mode.clone(),
        sub_runs: used.len(),
        late,
        rules: changes,
    });
    Ok(comparison)
}

/// `rule`'s test across the sub-runs `used`, and its change in each of them.
fn rule_test(rule: &RegressionRule, ab: &AbResult, used: &[&SubRun]) -> (RuleTest, RuleChanges) {
    let scale = Scale::of(rule);
    let sides = [&ab.baseline, &ab.candidate].map(|r| scoped(rule, r));
    let values = sides.each_ref().map(|s| {
        s.as_ref()
            .ok()
            .and_then(|s| whole_run_value(rule, &s.target))
    });
    let mut x = Vec::new();
    let mut changes = Vec::new();
    for s in used {
        let [b, c] = [&s.baseline, &s.candidate].map(|r| {
            scoped(rule, r)
                .ok()
                .and_then(|s| whole_run_value(rule, &s.target))
        });
        let Some(change) = b.zip(c).map(|(b, c)| scale.change(b, c)) else {
            continue;
        };
        if change.is_finite() {
            x.push(change);
            changes.push(SubRunChange {
                sub_run: s.index,
                baseline_first: s.baseline_first,
                change: scale.to_shown(change),
            });
        }
    }
    let evidence = if sides.iter().any(Result::is_err) {
        Err(missing_reason(
            rule,
            sides.each_ref().map(|s| s.as_ref().err()),
        ))
    } else {
        prepared(rule, values).and_then(|e| {
            stats::across_sub_runs(&x, e.allowance).ok_or_else(|| {
                format!(
                    "too few sub-runs with a value on both sides to judge: {}, at least {} \
                     needed",
                    x.len(),
                    stats::MIN_SUB_RUNS
                )
            })
        })
    };
    let test = RuleTest::new(values, [x.len(); 2], evidence);
    let changes = RuleChanges {
        rule: rule.expression.clone(),
        relative: scale.relative(),
        changes,
    };
    (test, changes)
}

/// The note on the sub-runs, e.g. `paired (duet): both sides loaded at the same time in 8
/// sub-runs of 1.0 s, the sides' positions swapped from one to the next; 1 left out (late)`.
fn note(ab: &AbResult, used: usize, late: usize) -> String {
    let how = if ab.mode == "alternating" {
        "the sides loaded in turn"
    } else {
        "both sides loaded at the same time"
    };
    let all = used + late;
    if all == 0 {
        return format!(
            "paired ({}): {how}, but the result has no sub-runs to judge the rules across",
            ab.mode
        );
    }
    let each_s = ab.sub_runs.first().map_or(0.0, |s| s.baseline.duration_s);
    let mut note = format!(
        "paired ({}): {how} in {all} sub-runs of {each_s:.1} s, the sides' positions swapped \
         from one to the next",
        ab.mode
    );
    if late > 0 {
        note.push_str(&format!(
            "; {late} left out: the generator fell behind on a side (more than 1% of its \
             requests started over 10 ms late){}",
            if late as f64 > MAX_LATE_SHARE * all as f64 {
                format!(
                    ", in more than {:.0}% of the sub-runs: the measurement is invalid",
                    MAX_LATE_SHARE * 100.0
                )
            } else {
                String::new()
            }
        ));
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::RuleState;
    use crate::compare::gate::Overall;
    use crate::plan::threshold::Metric;
    use crate::result::{RecordedRule, RunResult};

    fn fixture() -> RunResult {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        crate::result::read(std::path::Path::new(path)).expect("the fixture reads")
    }

    /// The fixture with its whole-run p50 set to `p50_us`.
    fn side(p50_us: f64) -> RunResult {
        let mut r = fixture();
        r.total.latency_us.as_mut().unwrap().p50_us = p50_us as u64;
        r
    }

    /// An ab result of sub-runs `(baseline p50, candidate p50, late)`, the rule `p(50) +5%
    /// floor 0us` recorded; the whole sides at the first sub-run's values.
    fn ab(sub_runs: &[(f64, f64, bool)]) -> AbResult {
        let mut candidate = side(sub_runs[0].1);
        let rule = RegressionRule::parse(Metric::Latency, "p(50) +5% floor 0us").unwrap();
        candidate.regression_rules = Some(vec![RecordedRule::from_rule(&rule)]);
        AbResult {
            ab_version: crate::result::ab::AB_VERSION,
            mode: "duet".to_string(),
            epoch_ms: 250,
            baseline: side(sub_runs[0].0),
            candidate,
            sub_runs: sub_runs
                .iter()
                .enumerate()
                .map(|(i, (b, c, late))| SubRun {
                    index: i as u32,
                    baseline_first: i % 2 == 0,
                    late: *late,
                    baseline: side(*b),
                    candidate: side(*c),
                })
                .collect(),
            baseline_epochs: Vec::new(),
            candidate_epochs: Vec::new(),
            machine_busy: None,
        }
    }

    #[test]
    fn a_candidate_slower_in_every_sub_run_regresses_and_late_ones_are_left_out() {
        // About +20% in each sub-run, with noise shared by both sides and the candidate's own;
        // sub-run 3 late (and wild).
        let noise = [1_000.0, 1_100.0, 950.0, 1_000.0, 1_050.0, 980.0, 1_020.0];
        let own = [1.18, 1.22, 1.21, 1.0, 1.19, 1.17, 1.23];
        let mut sub_runs: Vec<_> = noise
            .iter()
            .zip(own)
            .map(|(b, f)| (*b, b * f, false))
            .collect();
        sub_runs[3] = (1_000.0, 9_000.0, true);
        let ab = ab(&sub_runs);
        let comparison = compare_paired(&ab).unwrap();
        let verdict = &comparison.rules[0];
        assert_eq!(verdict.verdict, RuleState::Regressed, "{verdict:#?}");
        assert_eq!(verdict.samples, [6, 6]);
        let family = comparison.family.as_ref().unwrap();
        assert_eq!((family.tested, family.method.as_str()), (1, "holm"));
        // One rule: Holm's only step is at the whole α.
        assert_eq!(verdict.level, Some(0.05));
        let [low, high] = verdict.relative_change_ci.unwrap();
        assert!(low > 0.05 && low < 0.2 && 0.2 < high, "{verdict:#?}");

        let paired = comparison.paired.as_ref().unwrap();
        assert_eq!((paired.sub_runs, paired.late), (6, 1));
        assert!(!paired.too_many_late());
        let changes = &paired.rules[0];
        assert!(changes.relative);
        let indices: Vec<u32> = changes.changes.iter().map(|c| c.sub_run).collect();
        assert_eq!(indices, [0, 1, 2, 4, 5, 6]);
        assert!(!changes.changes[1].baseline_first);
        assert!(
            changes
                .changes
                .iter()
                .all(|c| (c.change - 0.2).abs() < 0.04)
        );
        let note = comparison.notes.last().unwrap();
        assert!(
            note.starts_with("paired (duet): both sides loaded at the same time in 7 sub-runs")
                && note.contains("1 left out: the generator fell behind"),
            "{note}"
        );
    }

    #[test]
    fn identical_sides_are_unchanged() {
        let sub_runs: Vec<_> = [1_000.0, 1_020.0, 990.0, 1_010.0]
            .iter()
            .zip([1_010.0, 1_000.0, 1_000.0, 1_000.0])
            .map(|(b, c)| (*b, c, false))
            .collect();
        let comparison = compare_paired(&ab(&sub_runs)).unwrap();
        let verdict = &comparison.rules[0];
        assert_eq!(verdict.verdict, RuleState::Unchanged, "{verdict:#?}");
        assert!(verdict.mde.unwrap() > 50.0, "{verdict:#?}");
    }

    #[test]
    fn too_few_sub_runs_are_inconclusive_and_too_many_late_invalid() {
        let mut sub_runs = vec![(1_000.0, 1_200.0, false); 3];
        sub_runs.extend([(1_000.0, 1_000.0, true); 4]);
        let ab = ab(&sub_runs);
        let comparison = compare_paired(&ab).unwrap();
        let verdict = &comparison.rules[0];
        assert_eq!(verdict.verdict, RuleState::Inconclusive);
        assert_eq!(
            verdict.reason,
            "too few sub-runs with a value on both sides to judge: 3, at least 4 needed"
        );
        assert_eq!(comparison.family, None);
        let paired = comparison.paired.as_ref().unwrap();
        assert!(paired.too_many_late());
        assert!(
            comparison
                .notes
                .last()
                .unwrap()
                .contains("the measurement is invalid")
        );
        assert_eq!(
            Overall::of(&ab.candidate, Some(&comparison)),
            Overall::InvalidMeasurement
        );
    }
}
