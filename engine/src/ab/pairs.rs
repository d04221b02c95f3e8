//! The epochs of a duet and the paired verdicts: second `i` of the baseline paired with second
//! `i` of the candidate (both sides loaded at the same time, on the same schedule), complete
//! seconds only, as `compare` uses a run's per-second samples.

use std::collections::BTreeMap;

use crate::compare::RuleVerdict;
use crate::compare::paired::{judge_paired, noise_half_width};
use crate::compare::samples;
use crate::plan::regression::RegressionRule;
use crate::plan::threshold::Metric;
use crate::result::{RunResult, TimeSample};

/// The seconds both sides completed, paired by their index, and the seconds of either side
/// left out (cut short at the end of the run, or missing on the other side).
pub(super) struct Epochs<'a> {
    /// `(baseline's second i, candidate's second i)`, in time order.
    pub(super) pairs: Vec<(&'a TimeSample, &'a TimeSample)>,
    /// The indices (`second`, from 0 at the end of the warmup) of the seconds left out.
    pub(super) left_out: Vec<u32>,
}

impl<'a> Epochs<'a> {
    /// Pairs the complete seconds of `baseline` and `candidate`.
    pub(super) fn of(baseline: &'a RunResult, candidate: &'a RunResult) -> Epochs<'a> {
        let (b, c) = (complete_seconds(baseline), complete_seconds(candidate));
        let pairs = b
            .iter()
            .filter_map(|(second, sb)| c.get(second).map(|sc| (*sb, *sc)))
            .collect::<Vec<_>>();
        let mut left_out: Vec<u32> = baseline
            .time_series
            .iter()
            .chain(&candidate.time_series)
            .map(|s| s.second)
            .filter(|s| !(b.contains_key(s) && c.contains_key(s)))
            .collect();
        left_out.sort_unstable();
        left_out.dedup();
        Epochs { pairs, left_out }
    }

    /// `pairs` for [`judge_paired`]: the per-second value `rule` looks at on each side, in the
    /// rule's unit, for the epochs where both sides have one.
    pub(super) fn values(&self, rule: &RegressionRule) -> Vec<(f64, f64)> {
        self.pairs
            .iter()
            .filter_map(|(b, c)| Some((second_value(rule, b)?, second_value(rule, c)?)))
            .collect()
    }

    /// The note on the pairing, e.g. `paired (duet): both sides loaded at the same time; 5
    /// per-second pairs (second 5 left out: incomplete or on one side only)`.
    pub(super) fn note(&self) -> String {
        let mut note = format!(
            "paired (duet): both sides loaded at the same time; {} per-second pairs",
            self.pairs.len()
        );
        if !self.left_out.is_empty() {
            let seconds: Vec<String> = self.left_out.iter().map(u32::to_string).collect();
            let word = if seconds.len() == 1 {
                "second"
            } else {
                "seconds"
            };
            note.push_str(&format!(
                " ({word} {} left out: incomplete or on one side only)",
                seconds.join(", ")
            ));
        }
        note
    }
}

/// The note on what the pairs can see: per rule, the half-width of its 95% interval (the
/// smallest change this run could tell from noise: [`noise_half_width`]), e.g. `minimum
/// detectable effect over 5 pairs: p(50) ±1.2%, errors rate ±0.10 points`.
pub(super) fn detectable_note(rules: &[RegressionRule], epochs: &Epochs<'_>) -> String {
    let parts: Vec<String> = rules
        .iter()
        .map(|rule| {
            let label = format!("{} {}", rule.metric.name(), rule.aggregation);
            match (noise_half_width(rule, &epochs.values(rule)), rule.metric) {
                (None, _) => format!("{label} (too few pairs)"),
                (Some(h), Metric::Errors) => format!("{label} ±{:.2} points", h * 100.0),
                (Some(h), _) => format!("{label} ±{:.1}%", h * 100.0),
            }
        })
        .collect();
    format!(
        "minimum detectable effect over {} pairs (95% interval half-width): {}",
        epochs.pairs.len(),
        parts.join(", ")
    )
}

/// Judges every rule on the paired epochs.
pub(super) fn verdicts(
    rules: &[RegressionRule],
    epochs: &Epochs<'_>,
    baseline: &RunResult,
    candidate: &RunResult,
) -> Vec<RuleVerdict> {
    rules
        .iter()
        .map(|rule| {
            judge_paired(
                rule,
                &baseline.total,
                &candidate.total,
                &epochs.values(rule),
            )
        })
        .collect()
}

/// The complete seconds of a side's series by index (as `compare` takes a run's samples).
fn complete_seconds(result: &RunResult) -> BTreeMap<u32, &TimeSample> {
    samples::complete_seconds(result)
        .map(|s| (s.second, s))
        .collect()
}

/// The value `rule` looks at in one second, in its unit: a latency rule's percentile or mean
/// (µs; none without responses), the responses of the second (`requests`, per second), or the
/// second's error rate (`errors`, a fraction of the requests ended; none without requests).
fn second_value(rule: &RegressionRule, s: &TimeSample) -> Option<f64> {
    match rule.metric {
        Metric::Latency => samples::second_latency(rule, s),
        Metric::Requests => Some(s.responses as f64),
        Metric::Errors => {
            // Results of this loadgate record the requests ended in each second; without
            // them, responses and errors stand in.
            let requests = s.requests.unwrap_or(s.responses + s.errors);
            (requests > 0).then(|| s.errors as f64 / requests as f64)
        }
        Metric::Checks => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(second: u32, responses: u64, errors: u64, p50_us: u64) -> TimeSample {
        TimeSample {
            second,
            responses,
            errors,
            p50_us,
            p99_us: p50_us * 2,
            max_us: p50_us * 3,
            p90_us: Some(p50_us + 10),
            p95_us: Some(p50_us + 20),
            p99_9_us: Some(p50_us * 3),
            mean_us: Some(p50_us as f64 + 5.0),
            requests: Some(responses + errors),
        }
    }

    fn with_series(mut result: RunResult, series: Vec<TimeSample>, duration_s: f64) -> RunResult {
        result.time_series = series;
        result.duration_s = duration_s;
        result
    }

    fn result() -> RunResult {
        let text = include_str!("../../tests/fixtures/results/v2-current.json");
        serde_json::from_str(text).expect("the fixture is a result")
    }

    #[test]
    fn seconds_pair_by_index_complete_in_both_only() {
        // The baseline ran 3.5 s (second 3 cut short); the candidate has no second 1.
        let baseline = with_series(
            result(),
            (0..4).map(|i| second(i, 100, 0, 1_000)).collect(),
            3.5,
        );
        let candidate = with_series(
            result(),
            [0, 2, 3].map(|i| second(i, 90, 10, 2_000)).to_vec(),
            4.0,
        );
        let epochs = Epochs::of(&baseline, &candidate);
        let seconds: Vec<_> = epochs.pairs.iter().map(|(b, _)| b.second).collect();
        assert_eq!(seconds, [0, 2]);
        assert_eq!(epochs.left_out, [1, 3]);
        assert!(
            epochs
                .note()
                .contains("2 per-second pairs (seconds 1, 3 left out")
        );

        let rule = |metric, text| RegressionRule::parse(metric, text).unwrap();
        let p95 = rule(Metric::Latency, "p(95) +10%");
        assert_eq!(epochs.values(&p95), [(1_020.0, 2_020.0); 2]);
        let rps = rule(Metric::Requests, "rate -10%");
        assert_eq!(epochs.values(&rps), [(100.0, 90.0); 2]);
        let errors = rule(Metric::Errors, "rate +10%");
        assert_eq!(epochs.values(&errors), [(0.0, 0.1); 2]);
    }

    #[test]
    fn seconds_without_a_value_are_left_out_of_a_rules_pairs() {
        let baseline = with_series(
            result(),
            vec![second(0, 0, 0, 0), second(1, 50, 0, 900)],
            2.0,
        );
        let candidate = with_series(
            result(),
            vec![second(0, 40, 0, 800), second(1, 50, 0, 950)],
            2.0,
        );
        let epochs = Epochs::of(&baseline, &candidate);
        let p50 = RegressionRule::parse(Metric::Latency, "p(50) +10%").unwrap();
        assert_eq!(epochs.values(&p50), [(900.0, 950.0)]);
        let errors = RegressionRule::parse(Metric::Errors, "rate +10%").unwrap();
        assert_eq!(epochs.values(&errors), [(0.0, 0.0)]);
        assert_eq!(
            epochs.note(),
            "paired (duet): both sides loaded at the same time; 2 per-second pairs"
        );
    }
}
