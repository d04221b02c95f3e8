//! The comparison of the two sides of `loadgate ab` ([`AbResult`]): epoch `i` of the baseline
//! paired with epoch `i` of the candidate (both sides loaded at the same time, on the same
//! schedule), complete epochs only, and each regression rule judged on the pairs
//! (`paired::judge_paired`) instead of as two separate runs.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::paired::judge_paired;
use super::{CompareError, Comparison, RuleVerdict};
use crate::plan::regression::{RegressionRule, RuleScope};
use crate::plan::threshold::{Aggregation, Metric};
use crate::result::ab::{AbResult, EpochSample};

/// The per-sub-run changes behind the paired verdicts, for the reports' chart: one series per
/// regression rule, in the order of [`Comparison::rules`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Paired {
    /// How the sides were loaded: `duet`.
    pub mode: String,
    /// Sub-runs judged (not late).
    pub sub_runs: usize,
    /// Sub-runs left out because the generator fell behind on a side (more than 1% of its
    /// requests started over 10 ms late). When they are more than [`MAX_DROPPED_SHARE`] of
    /// all, the measurement is invalid (exit 5).
    pub late: usize,
    /// Per rule, in the order of the comparison's `rules`.
    pub rules: Vec<RuleChanges>,
}

/// The share of sub-runs that may be left out (the generator behind on either side) before
/// the paired measurement as a whole is invalid.
pub const MAX_DROPPED_SHARE: f64 = 0.2;

impl Paired {
    /// More than [`MAX_DROPPED_SHARE`] of the sub-runs were late: the generator did not apply
    /// the planned load for long enough to judge (an invalid measurement).
    pub fn too_many_dropped(&self) -> bool {
        self.late as f64 > MAX_DROPPED_SHARE * (self.sub_runs + self.late) as f64
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
/// notes), with the rules judged on the paired epochs, a note on the pairing and one on what
/// the pairs can see, and the per-epoch changes. Errors: as [`super::compare`].
pub fn compare_paired(ab: &AbResult) -> Result<Comparison, CompareError> {
    let mut comparison = super::compare(&ab.baseline, &ab.candidate)?;
    let rules = super::recorded_rules(&ab.baseline, &ab.candidate, &mut Vec::new())?;
    let epochs = Epochs::of(ab);
    // Epochs are of the whole run: a target's or flow's rule keeps its two-run verdict.
    comparison.rules = rules
        .iter()
        .zip(std::mem::take(&mut comparison.rules))
        .map(|(rule, two_run)| match rule.scope {
            RuleScope::Total => judge(rule, &epochs, ab),
            _ => two_run,
        })
        .collect();
    comparison.notes.push(epochs.note(ab));
    comparison.notes.extend(ab.saturation_note());
    comparison.paired = Some(Paired {
        mode: ab.mode.clone(),
        sub_runs: epochs.pairs.len(),
        late: epochs.late.len(),
        rules: rules
            .iter()
            .zip(&comparison.rules)
            .map(|(rule, verdict)| match rule.scope {
                RuleScope::Total => epochs.changes(rule, &verdict.rule),
                _ => RuleChanges {
                    rule: verdict.rule.clone(),
                    relative: rule.metric != Metric::Errors,
                    changes: Vec::new(),
                },
            })
            .collect(),
    });
    Ok(comparison)
}

/// Judges `rule` on the pairs; the whole-run values are the sides' `total`s.
fn judge(rule: &RegressionRule, epochs: &Epochs<'_>, ab: &AbResult) -> RuleVerdict {
    judge_paired(
        rule,
        &ab.baseline.total,
        &ab.candidate.total,
        &epochs.values(rule),
    )
}

/// The epochs both sides completed, paired by their index, and the epochs of either side left
/// out (missing on the other side, or the generator behind in it).
struct Epochs<'a> {
    /// `(baseline's epoch i, candidate's epoch i)`, in time order.
    pairs: Vec<(&'a EpochSample, &'a EpochSample)>,
    /// The indices of the epochs on one side only.
    left_out: Vec<u32>,
    /// The indices of the pairs dropped because a side's generator fell behind ([`behind`]).
    late: Vec<u32>,
}

/// More than 1% of the epoch's requests started more than 10 ms after they were due: the
/// generator did not apply the planned load in it (the health check's lateness limit, per
/// epoch).
fn behind(e: &EpochSample) -> bool {
    e.late * 100 > e.requests
}

impl<'a> Epochs<'a> {
    /// Pairs the sides' complete epochs.
    fn of(ab: &'a AbResult) -> Epochs<'a> {
        let by_index = |s: &'a [EpochSample]| -> BTreeMap<u32, &'a EpochSample> {
            s.iter().map(|e| (e.epoch, e)).collect()
        };
        let (b, c) = (
            by_index(&ab.baseline_epochs),
            by_index(&ab.candidate_epochs),
        );
        let (pairs, late): (Vec<_>, Vec<_>) = b
            .iter()
            .filter_map(|(i, sb)| c.get(i).map(|sc| (*sb, *sc)))
            .partition(|(sb, sc)| !behind(sb) && !behind(sc));
        let late = late.iter().map(|(sb, _)| sb.epoch).collect();
        let mut left_out: Vec<u32> = b
            .keys()
            .filter(|i| !c.contains_key(i))
            .chain(c.keys().filter(|i| !b.contains_key(i)))
            .copied()
            .collect();
        left_out.sort_unstable();
        Epochs {
            pairs,
            left_out,
            late,
        }
    }

    /// `pairs` for [`judge_paired`]: the per-epoch value `rule` looks at on each side, in the
    /// rule's unit, for the epochs where both sides have one.
    fn values(&self, rule: &RegressionRule) -> Vec<(f64, f64)> {
        self.pairs
            .iter()
            .filter_map(|(b, c)| Some((epoch_value(rule, b)?, epoch_value(rule, c)?)))
            .collect()
    }

    /// The change of `rule`'s metric in each pair (relative for latency and throughput,
    /// absolute for the error rate), for the chart.
    fn changes(&self, rule: &RegressionRule, text: &str) -> RuleChanges {
        let relative = rule.metric != Metric::Errors;
        let changes = self
            .pairs
            .iter()
            .filter_map(|(b, c)| {
                let (vb, vc) = (epoch_value(rule, b)?, epoch_value(rule, c)?);
                let change = if relative { vc / vb - 1.0 } else { vc - vb };
                change.is_finite().then_some(SubRunChange {
                    sub_run: b.epoch,
                    baseline_first: true,
                    change,
                })
            })
            .collect();
        RuleChanges {
            rule: text.to_string(),
            relative,
            changes,
        }
    }

    /// The note on the pairing, e.g. `paired (duet): both sides loaded at the same time; 28
    /// pairs of 250 ms epochs (epoch 3 left out: on one side only)`.
    fn note(&self, ab: &AbResult) -> String {
        let how = if ab.mode == "alternating" {
            "the sides loaded in turn, epoch by epoch in ABBA blocks"
        } else {
            "both sides loaded at the same time"
        };
        let mut note = format!(
            "paired ({}): {how}; {} pairs of {} ms epochs",
            ab.mode,
            self.pairs.len(),
            ab.epoch_ms
        );
        if !self.left_out.is_empty() {
            let epochs: Vec<String> = self.left_out.iter().map(u32::to_string).collect();
            let word = if epochs.len() == 1 { "epoch" } else { "epochs" };
            note.push_str(&format!(
                " ({word} {} left out: on one side only)",
                epochs.join(", ")
            ));
        }
        if !self.late.is_empty() {
            let share = self.late.len() as f64 / (self.pairs.len() + self.late.len()) as f64;
            note.push_str(&format!(
                "; {} pairs dropped ({:.0}%): the generator fell behind in a side's epoch (more \
                 than 1% of its requests started over 10 ms late){}",
                self.late.len(),
                share * 100.0,
                if share > MAX_DROPPED_SHARE {
                    format!(
                        ", more than {:.0}% of the pairs: the measurement is invalid",
                        MAX_DROPPED_SHARE * 100.0
                    )
                } else {
                    String::new()
                }
            ));
        }
        note
    }
}

/// The value `rule` looks at in one epoch, in its unit: a latency rule's percentile or mean
/// (µs; none without responses), the responses of the epoch (`requests` rules: epochs are of
/// one length, so their ratio is the throughput's), or the epoch's error rate (`errors`, a fraction of the requests ended; none without requests).
fn epoch_value(rule: &RegressionRule, e: &EpochSample) -> Option<f64> {
    match rule.metric {
        Metric::Latency if e.responses == 0 => None,
        Metric::Latency => match rule.aggregation {
            Aggregation::Mean => Some(e.mean_us),
            Aggregation::Median => Some(e.p50_us as f64),
            Aggregation::Percentile(p) => Some(match p {
                50.0 => e.p50_us,
                90.0 => e.p90_us,
                95.0 => e.p95_us,
                99.0 => e.p99_us,
                _ => e.p99_9_us,
            } as f64),
            _ => None,
        },
        Metric::Responses => Some(e.responses as f64),
        Metric::Errors => (e.requests > 0).then(|| e.errors as f64 / e.requests as f64),
        Metric::Checks => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::regression::ScopeKind;

    fn epoch(epoch: u32, responses: u64, errors: u64, p50_us: u64) -> EpochSample {
        EpochSample {
            epoch,
            requests: responses + errors,
            responses,
            errors,
            late: 0,
            p50_us,
            p90_us: p50_us + 10,
            p95_us: p50_us + 20,
            p99_us: p50_us * 2,
            p99_9_us: p50_us * 3,
            max_us: p50_us * 3,
            mean_us: p50_us as f64 + 5.0,
        }
    }

    fn ab(baseline: Vec<EpochSample>, candidate: Vec<EpochSample>) -> AbResult {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let result = crate::result::read(std::path::Path::new(path)).expect("the fixture reads");
        AbResult {
            ab_version: crate::result::ab::AB_VERSION,
            mode: "duet".to_string(),
            epoch_ms: 250,
            baseline: result.clone(),
            candidate: result,
            sub_runs: Vec::new(),
            baseline_epochs: baseline,
            candidate_epochs: candidate,
            machine_busy: None,
        }
    }

    fn rule(metric: Metric, text: &str) -> RegressionRule {
        RegressionRule::parse(metric, text).unwrap()
    }

    #[test]
    fn epochs_pair_by_index_on_both_sides_only() {
        // The candidate has no epoch 1; the baseline none of epoch 3.
        let ab = ab(
            (0..3).map(|i| epoch(i, 100, 0, 1_000)).collect(),
            [0, 2, 3].map(|i| epoch(i, 90, 10, 2_000)).to_vec(),
        );
        let epochs = Epochs::of(&ab);
        let indices: Vec<_> = epochs.pairs.iter().map(|(b, _)| b.epoch).collect();
        assert_eq!(indices, [0, 2]);
        assert_eq!(epochs.left_out, [1, 3]);
        assert!(
            epochs
                .note(&ab)
                .contains("2 pairs of 250 ms epochs (epochs 1, 3 left out")
        );

        let p95 = rule(Metric::Latency, "p(95) +10%");
        assert_eq!(epochs.values(&p95), [(1_020.0, 2_020.0); 2]);
        let rps = rule(Metric::Responses, "rate -10%");
        assert_eq!(epochs.values(&rps), [(100.0, 90.0); 2]);
        let errors = rule(Metric::Errors, "rate +10%");
        assert_eq!(epochs.values(&errors), [(0.0, 0.1); 2]);

        let changes = epochs.changes(&rps, "rate -10%");
        assert!(changes.relative);
        let got: Vec<_> = changes
            .changes
            .iter()
            .map(|c| (c.sub_run, c.change))
            .collect();
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|(_, c)| (c + 0.1).abs() < 1e-12), "{got:?}");
        let changes = epochs.changes(&errors, "rate +10%");
        assert!(!changes.relative);
        assert!((changes.changes[1].change - 0.1).abs() < 1e-12);
    }

    #[test]
    fn epochs_without_a_value_are_left_out_of_a_rules_pairs() {
        let ab = ab(
            vec![epoch(0, 0, 0, 0), epoch(1, 50, 0, 900)],
            vec![epoch(0, 40, 0, 800), epoch(1, 50, 0, 950)],
        );
        let epochs = Epochs::of(&ab);
        let p50 = rule(Metric::Latency, "p(50) +10%");
        assert_eq!(epochs.values(&p50), [(900.0, 950.0)]);
        let errors = rule(Metric::Errors, "rate +10%");
        assert_eq!(epochs.values(&errors), [(0.0, 0.0)]);
        assert_eq!(
            epochs.note(&ab),
            "paired (duet): both sides loaded at the same time; 2 pairs of 250 ms epochs"
        );
    }

    #[test]
    fn pairs_where_a_side_fell_behind_are_dropped_and_too_many_invalidate() {
        let late = |i: u32, late: u64| EpochSample {
            late,
            ..epoch(i, 100, 0, 1_000)
        };
        // Epoch 1: 1 of 100 requests late (kept); epoch 2: 2 late on the candidate (dropped).
        let kept = ab(
            (0..10).map(|i| late(i, u64::from(i == 1))).collect(),
            (0..10)
                .map(|i| late(i, if i == 2 { 2 } else { 0 }))
                .collect(),
        );
        let epochs = Epochs::of(&kept);
        assert_eq!(epochs.pairs.len(), 9);
        assert_eq!(epochs.late, [2]);
        let note = epochs.note(&kept);
        assert!(note.contains("1 pairs dropped (10%)"), "{note}");
        assert!(!note.contains("invalid"), "{note}");
        let comparison = compare_paired(&kept).unwrap();
        let paired = comparison.paired.as_ref().unwrap();
        assert_eq!((paired.sub_runs, paired.late), (9, 1));
        assert!(!paired.too_many_dropped());

        // 3 of 10 pairs dropped: more than 20%, an invalid measurement (exit 5).
        let behind = ab(
            (0..10)
                .map(|i| late(i, if i < 3 { 50 } else { 0 }))
                .collect(),
            (0..10).map(|i| late(i, 0)).collect(),
        );
        let comparison = compare_paired(&behind).unwrap();
        assert!(comparison.paired.as_ref().unwrap().too_many_dropped());
        assert!(
            comparison
                .notes
                .iter()
                .any(|n| n.contains("the measurement is invalid"))
        );
        assert_eq!(
            super::super::gate::Overall::of(&behind.candidate, Some(&comparison)),
            super::super::gate::Overall::InvalidMeasurement
        );
    }

    #[test]
    fn a_slower_candidate_in_every_epoch_regresses_and_the_chart_has_each_pair() {
        // 40 pairs; the candidate's p50 is 20% above the baseline's in each, with noise shared
        // by both sides of a pair (a neighbour).
        let noise = |i: u32| 1_000 + u64::from(i % 7) * 150;
        let ab = ab(
            (0..40).map(|i| epoch(i, 100, 0, noise(i))).collect(),
            (0..40)
                .map(|i| epoch(i, 100, 0, noise(i) * 6 / 5))
                .collect(),
        );
        let mut ab = ab;
        // The whole-run values: the candidate's p50 20% above too.
        let latency = ab
            .candidate
            .total
            .latency_us
            .as_mut()
            .expect("the fixture has latency");
        latency.p50_us = latency.p50_us * 6 / 5;
        ab.candidate.regression_rules = Some(vec![crate::result::RecordedRule::from_rule(&rule(
            Metric::Latency,
            "p(50) +5% floor 0us",
        ))]);
        let comparison = compare_paired(&ab).unwrap();
        assert_eq!(comparison.rules.len(), 1);
        let verdict = &comparison.rules[0];
        assert_eq!(
            verdict.verdict,
            super::super::RuleState::Regressed,
            "{verdict:?}"
        );
        assert!(comparison.rules[0].reason.contains("40 epoch pairs"));
        let paired = comparison.paired.expect("the chart's series");
        assert_eq!(paired.sub_runs, 40);
        assert_eq!(paired.rules[0].changes.len(), 40);
        assert!(
            paired.rules[0]
                .changes
                .iter()
                .all(|c| (c.change - 0.2).abs() < 0.01)
        );
        assert!(
            comparison
                .notes
                .iter()
                .any(|n| n.contains("40 pairs of 250 ms"))
        );
    }

    #[test]
    fn a_targets_rule_keeps_its_two_run_verdict_and_has_no_epochs() {
        let noise = |i: u32| 1_000 + u64::from(i % 7) * 150;
        let mut ab = ab(
            (0..40).map(|i| epoch(i, 100, 0, noise(i))).collect(),
            (0..40).map(|i| epoch(i, 100, 0, noise(i))).collect(),
        );
        let name = ab.candidate.targets[1].name.clone();
        let mut scoped = rule(Metric::Latency, "p(50) +5% floor 0us");
        scoped.scope = RuleScope::Target(name.clone());
        ab.candidate.regression_rules = Some(vec![
            crate::result::RecordedRule::from_rule(&rule(Metric::Latency, "p(50) +5% floor 0us")),
            crate::result::RecordedRule::from_rule(&scoped),
        ]);
        let two_run = super::super::compare(&ab.baseline, &ab.candidate).unwrap();
        let comparison = compare_paired(&ab).unwrap();
        assert_eq!(comparison.rules.len(), 2);
        assert!(comparison.rules[0].reason.contains("40 epoch pairs"));
        assert_eq!(comparison.rules[1], two_run.rules[1]);
        assert_eq!(
            (comparison.rules[1].scope_kind, &comparison.rules[1].scope),
            (ScopeKind::Target, &name)
        );
        let paired = comparison.paired.expect("the chart's series");
        assert_eq!(paired.rules[0].changes.len(), 40);
        assert!(paired.rules[1].changes.is_empty());
    }
}
