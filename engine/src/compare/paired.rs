//! The verdict of a regression rule on **paired** epochs: both sides (baseline and candidate)
//! were loaded at the same time, on the same schedule (duet benchmarking: Bulej et al., "Duet
//! Benchmarking: Improving Measurement Accuracy in the Cloud", ICPE 2020), and each epoch gives
//! one pair `(baseline_i, candidate_i)` of the rule's metric. Whatever slowed the machine in an
//! epoch slowed both sides alike, so the verdict looks at the differences within pairs.
//!
//! # Method
//!
//! 1. **Differences.** For latency and `requests` rules, the change is relative:
//!    `d_i = ln(candidate_i / baseline_i)`; pairs where a side is not positive are left out and
//!    counted in the reason. For `errors` rules, the change is absolute:
//!    `d_i = candidate_i − baseline_i` (fractions).
//! 2. **Estimate.** The shift is estimated by the Hodges–Lehmann estimator: the median of the
//!    `M = n(n+1)/2` Walsh averages `(d_i + d_j) / 2, i ≤ j` (Hollander, Wolfe & Chicken,
//!    *Nonparametric Statistical Methods*, 3rd ed., 2014, §3.2).
//! 3. **Interval.** The 95% interval of the shift is the one that inverts the Wilcoxon
//!    signed-rank test (Hollander et al. 2014, §3.3; Bauer, "Constructing confidence sets using
//!    rank statistics", JASA 67, 1972): from the sorted Walsh averages `W(1) ≤ … ≤ W(M)`, it is
//!    `[W(k), W(M+1−k)]`, where `k − 1` is the largest `t` with `P(T⁺ ≤ t) ≤ 2.5%` under the null
//!    hypothesis of no shift, `T⁺` the signed-rank statistic. For up to [`EXACT_MAX_PAIRS`]
//!    differences the null distribution of `T⁺` is computed exactly, by the dynamic programme
//!    over rank sums (the number of subsets of `{1, …, n}` with each sum, over `2ⁿ`); above, by
//!    its normal approximation with a continuity correction (mean `n(n+1)/4`, variance
//!    `n(n+1)(2n+1)/24`). Published tables agree: `n = 10` gives `t = 8` (`k = 9`), `n = 20`
//!    gives `t = 52`. With fewer than [`MIN_PAIRS`] differences no `t` exists (even five
//!    differences of one sign happen with probability `2 × 2⁻⁵ = 6.25%` without a shift): no
//!    interval, and the verdict is inconclusive unless the floor decides.
//! 4. **Zeros and ties.** Differences of exactly zero (a side equal to the other, common for
//!    error rates) carry no sign: as usual for the signed-rank statistic they are dropped from
//!    its ranking, so `k` comes from the number `n'` of non-zero differences; the Walsh averages
//!    are those of all `n` pairs. The interval is then a little wider than with `k` from `n`
//!    (conservative). When every difference is zero, the interval is `[0, 0]`. Ties among the
//!    non-zero `|d_i|` are ignored: the null distribution is that of distinct ranks, which is
//!    what continuous per-epoch values give almost surely.
//! 5. **Back to the rule's unit.** On the log scale a bound `x` is the relative change
//!    `exp(x) − 1`; `change_ci` scales it by the baseline's whole-run value, as the two-run
//!    comparison scales its relative interval. Absolute bounds are the change itself.
//!
//! The state is then decided by `rules::judge` from this interval and the sides' whole-run
//! values, so the three states, the allowed change and the floor mean what they mean in the
//! two-run comparison (module documentation of [`super`]).

use statrs::distribution::{ContinuousCDF, Normal};

use super::rules::{self, RuleState, RuleVerdict};
use super::stats::{CONFIDENCE, Interval};
use crate::plan::regression::RegressionRule;
use crate::plan::threshold::Metric;
use crate::result::TargetResult;
use crate::units::{self, Unit};

/// Fewest epoch pairs (with a non-zero difference) that give a 95% signed-rank interval: the
/// smallest `n` with `P(T⁺ = 0) = 2⁻ⁿ ≤ 2.5%`.
pub(crate) const MIN_PAIRS: usize = 6;

/// Most non-zero differences for which the null distribution of the signed-rank statistic is
/// computed exactly; above, its normal approximation is used.
const EXACT_MAX_PAIRS: usize = 50;

/// How the epoch values of a rule are differenced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// `ln(candidate / baseline)`: latency and throughput, whose change is relative.
    Log,
    /// `candidate − baseline`: the error rate (fractions).
    Absolute,
}

/// A rule's paired differences.
#[derive(Debug, Clone, PartialEq)]
struct Differences {
    scale: Scale,
    /// One per usable pair, in the pairs' order.
    values: Vec<f64>,
    /// Pairs left out: a side not positive (log scale) or not finite.
    skipped: usize,
}

/// The Hodges–Lehmann estimate of the shift and its 95% Wilcoxon signed-rank interval, on the
/// scale of the differences (log ratio or absolute).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shift {
    estimate: f64,
    low: f64,
    high: f64,
}

/// Judges `rule` on paired epochs: `pairs[i] = (baseline_value, candidate_value)` of the rule's
/// metric in epoch `i` (both sides loaded at the same time), in the rule's unit (µs for latency
/// rules, a fraction for `errors`, responses/s for `requests`); epochs where either side has no
/// value are left out by the caller. `baseline` and `candidate` are the sides' whole results
/// (`total`), whose whole-run values are reported as `baseline`/`current`.
///
/// The verdict is filled as in the two-run comparison; `samples` is `[n, n]`, `n` the pairs
/// used (those left out are counted in `reason`); `change_ci` is the Wilcoxon signed-rank
/// interval of the module documentation, in the rule's unit.
pub(crate) fn judge_paired(
    rule: &RegressionRule,
    baseline: &TargetResult,
    candidate: &TargetResult,
    pairs: &[(f64, f64)],
) -> RuleVerdict {
    let b = rules::whole_run_value(rule, baseline);
    let c = rules::whole_run_value(rule, candidate);
    let diffs = differences(rule, pairs);
    let shift = signed_rank_shift(&diffs.values);
    let interval = shift.and_then(|s| change_interval(diffs.scale, s, b));
    let n = diffs.values.len();
    let decided = match (b, c) {
        (Some(b), Some(c)) => {
            let (state, why) = rules::judge(rule, b, c, interval, [n, n]);
            (state, paired_reason(state, why, &diffs, shift))
        }
        _ => (
            RuleState::Inconclusive,
            "no responses to measure on one of the sides".to_string(),
        ),
    };
    let verdict = rules::rule_verdict(rule, [b, c], interval, [n, n], decided);
    match (diffs.scale, shift) {
        // The relative interval straight from the log-scale bounds (less rounding than the
        // scaled interval divided by the baseline again).
        (Scale::Log, Some(s)) => RuleVerdict {
            relative_change_ci: verdict
                .relative_change_ci
                .map(|_| [s.low.exp_m1(), s.high.exp_m1()]),
            ..verdict
        },
        _ => verdict,
    }
}

/// The differences of `pairs` on the scale of `rule`'s metric (see the module documentation).
fn differences(rule: &RegressionRule, pairs: &[(f64, f64)]) -> Differences {
    let scale = match rule.metric {
        Metric::Latency | Metric::Responses => Scale::Log,
        // Checks have no regression rules (they do not parse); absolute if they ever do.
        Metric::Errors | Metric::Checks => Scale::Absolute,
    };
    let values: Vec<f64> = pairs
        .iter()
        .map(|&(b, c)| match scale {
            Scale::Log if b > 0.0 && c > 0.0 => (c / b).ln(),
            Scale::Log => f64::NAN,
            Scale::Absolute => c - b,
        })
        .filter(|d| d.is_finite())
        .collect();
    Differences {
        scale,
        skipped: pairs.len() - values.len(),
        values,
    }
}

/// The interval of the change in the rule's unit: on the log scale `(exp(bound) − 1) × b`
/// (absent without a baseline value `b`), else the bounds themselves.
fn change_interval(scale: Scale, shift: Shift, b: Option<f64>) -> Option<Interval> {
    match scale {
        Scale::Log => b.map(|b| Interval {
            low: shift.low.exp_m1() * b,
            high: shift.high.exp_m1() * b,
        }),
        Scale::Absolute => Some(Interval {
            low: shift.low,
            high: shift.high,
        }),
    }
}

/// `rules::judge`'s reason `why`, with the method and the number of pairs; the reason for a
/// missing interval says how many pairs were needed.
fn paired_reason(
    state: RuleState,
    why: String,
    diffs: &Differences,
    shift: Option<Shift>,
) -> String {
    let n = diffs.values.len();
    let mut pairs = format!("{n} epoch pairs");
    if diffs.skipped > 0 {
        let what = match diffs.scale {
            Scale::Log => "a side's value not positive",
            Scale::Absolute => "a side's value not a number",
        };
        pairs.push_str(&format!(" ({} left out: {what})", diffs.skipped));
    }
    let Some(s) = shift else {
        let nonzero = diffs.values.iter().filter(|d| **d != 0.0).count();
        let have = if n >= MIN_PAIRS {
            format!("{pairs}, {nonzero} of them with a difference")
        } else {
            pairs
        };
        let short = format!(
            "too few for a 95% Wilcoxon signed-rank interval: {have}; {MIN_PAIRS} with a \
             difference needed"
        );
        return if state == RuleState::Inconclusive {
            format!("{short}: run longer")
        } else {
            format!("{why}; paired, {short}")
        };
    };
    let estimate = match diffs.scale {
        Scale::Log => units::format_relative(Some(s.estimate.exp_m1())),
        Scale::Absolute => Unit::Ratio.format_signed(s.estimate),
    };
    format!(
        "{why}; paired: Wilcoxon signed-rank interval over {pairs}, Hodges-Lehmann shift \
         {estimate}"
    )
}

/// The Hodges–Lehmann estimate and the 95% Wilcoxon signed-rank interval of the shift of the
/// differences `d` (module documentation, steps 2–4); `None` with fewer than [`MIN_PAIRS`]
/// differences, or fewer than that many non-zero ones unless all are zero.
fn signed_rank_shift(d: &[f64]) -> Option<Shift> {
    if d.len() < MIN_PAIRS {
        return None;
    }
    let nonzero = d.iter().filter(|x| **x != 0.0).count();
    if nonzero == 0 {
        return Some(Shift {
            estimate: 0.0,
            low: 0.0,
            high: 0.0,
        });
    }
    let k = critical_k(nonzero)?;
    let w = walsh_averages(d);
    let m = w.len();
    let estimate = if m % 2 == 1 {
        w[m / 2]
    } else {
        (w[m / 2 - 1] + w[m / 2]) / 2.0
    };
    Some(Shift {
        estimate,
        low: w[k - 1],
        high: w[m - k],
    })
}

/// The Walsh averages `(d_i + d_j) / 2, i ≤ j`, sorted ascending: `n(n+1)/2` values.
fn walsh_averages(d: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for (i, a) in d.iter().enumerate() {
        w.extend(d[i..].iter().map(|b| (a + b) / 2.0));
    }
    w.sort_unstable_by(f64::total_cmp);
    w
}

/// The one-sided tail of the 95% interval: 2.5%.
fn tail() -> f64 {
    (1.0 - CONFIDENCE) / 2.0
}

/// The rank `k` of the interval's lower bound among the sorted Walsh averages, for `n` non-zero
/// differences: `t + 1`, `t` the largest with `P(T⁺ ≤ t) ≤ 2.5%`; `None` when there is none.
fn critical_k(n: usize) -> Option<usize> {
    if n <= EXACT_MAX_PAIRS {
        exact_critical_k(n)
    } else {
        normal_critical_k(n)
    }
}

/// [`critical_k`] from the exact null distribution of `T⁺` (n ≤ [`EXACT_MAX_PAIRS`]).
fn exact_critical_k(n: usize) -> Option<usize> {
    let counts = signed_rank_null_counts(n);
    // 2ⁿ ≤ 2⁵⁰ and every cumulative count are exact in an f64.
    let total = (n as f64).exp2();
    let mut cumulative = 0u64;
    let mut k = 0;
    for (t, count) in counts.iter().enumerate() {
        cumulative += count;
        if cumulative as f64 / total > tail() {
            break;
        }
        k = t + 1;
    }
    (k > 0).then_some(k)
}

/// [`critical_k`] from the normal approximation of `T⁺` with a continuity correction:
/// `P(T⁺ ≤ t) ≈ Φ((t + ½ − n(n+1)/4) / √(n(n+1)(2n+1)/24))`.
fn normal_critical_k(n: usize) -> Option<usize> {
    let n = n as f64;
    let mean = n * (n + 1.0) / 4.0;
    let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
    let z = Normal::standard().inverse_cdf(1.0 - tail());
    let t = (mean - 0.5 - z * sd).floor();
    (t >= 0.0).then(|| t as usize + 1)
}

/// The null distribution of the signed-rank statistic for `n` differences without ties, as
/// counts: `counts[w]` is the number of subsets of the ranks `{1, …, n}` that sum to `w`
/// (each of the `2ⁿ` sign patterns is equally likely). Dynamic programme over the ranks, the
/// 0/1 knapsack count. Exact in `u64` for `n ≤ 63`.
fn signed_rank_null_counts(n: usize) -> Vec<u64> {
    debug_assert!(n <= 63, "2^n must fit in a u64");
    let mut counts = vec![0u64; n * (n + 1) / 2 + 1];
    counts[0] = 1;
    for rank in 1..=n {
        for w in (rank..=rank * (rank + 1) / 2).rev() {
            counts[w] += counts[w - rank];
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::LatencySummary;

    fn rule(metric: Metric, text: &str) -> RegressionRule {
        RegressionRule::parse(metric, text).unwrap()
    }

    /// A side's whole result with every latency percentile at `latency_us`.
    fn side(latency_us: f64, error_rate: f64, rps: f64) -> TargetResult {
        let us = latency_us.round() as u64;
        TargetResult {
            name: "total".to_string(),
            requests: 1000,
            responses: 1000,
            error_rate,
            rps,
            latency_us: Some(LatencySummary {
                min_us: us,
                mean_us: latency_us,
                stdev_us: 0.0,
                p50_us: us,
                p90_us: us,
                p95_us: us,
                p99_us: us,
                p99_9_us: us,
                max_us: us,
                p10_us: None,
                p25_us: None,
                p75_us: None,
                p99_99_us: None,
            }),
            ..Default::default()
        }
    }

    /// A standard normal draw (Box–Muller), seeded.
    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let (u1, u2) = (rng.f64().max(1e-12), rng.f64());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// `n` latency pairs in µs: the baseline drifts by ±20% (log-sd 0.2) from epoch to epoch,
    /// as a shared runner does to both sides alike; the candidate is `ratio` × the baseline with
    /// its own multiplicative noise (log-sd `noise`, symmetric on the log scale).
    fn latency_pairs(rng: &mut fastrand::Rng, n: usize, ratio: f64, noise: f64) -> Vec<(f64, f64)> {
        (0..n)
            .map(|_| {
                let b = 2_000.0 * (0.2 * normal(rng)).exp();
                (b, b * ratio * (noise * normal(rng)).exp())
            })
            .collect()
    }

    /// The sides' whole-run values: the medians of their epochs.
    fn whole(pairs: &[(f64, f64)]) -> (f64, f64) {
        let b: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        let c: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        (super::super::median(&b), super::super::median(&c))
    }

    fn shift(d: &[f64]) -> (f64, f64, f64) {
        let s = signed_rank_shift(d).expect("an interval");
        (s.estimate, s.low, s.high)
    }

    /// Published critical values of the signed-rank statistic, two-sided 5% (e.g. Hollander et
    /// al. 2014, Table A.4; the usual table of "T ≤ t" values): n = 6: 0, n = 10: 8,
    /// n = 20: 52, n = 30: 137, n = 50: 434; none for n = 5. The interval's rank is t + 1.
    #[test]
    fn exact_critical_values_match_the_published_table() {
        assert_eq!(exact_critical_k(5), None);
        assert_eq!(exact_critical_k(6), Some(1));
        assert_eq!(exact_critical_k(10), Some(9));
        assert_eq!(exact_critical_k(20), Some(53));
        assert_eq!(exact_critical_k(30), Some(138));
        assert_eq!(exact_critical_k(50), Some(435));
        // The distribution itself: 2ⁿ sign patterns; for n = 10, 25 of the 1024 have T⁺ ≤ 8
        // (P = 0.0244, the table's 0.024), and T⁺ = 9 would give 0.0322 > 0.025.
        let counts = signed_rank_null_counts(10);
        assert_eq!(counts.iter().sum::<u64>(), 1024);
        assert_eq!(counts[..=8].iter().sum::<u64>(), 25);
        assert_eq!(counts[..=9].iter().sum::<u64>(), 33);
        assert_eq!(signed_rank_null_counts(50).iter().sum::<u64>(), 1 << 50);
    }

    #[test]
    fn min_pairs_is_the_smallest_sample_with_an_interval() {
        assert!(exact_critical_k(MIN_PAIRS - 1).is_none());
        assert!(exact_critical_k(MIN_PAIRS).is_some());
    }

    /// At n = 50 the normal approximation gives t = floor(637.5 − 0.5 − 1.95996 × 103.592) =
    /// 433 against the exact 434; from n = 20 on it is never more than one rank off.
    #[test]
    fn the_normal_approximation_is_close_to_the_exact_distribution() {
        assert_eq!(normal_critical_k(50), Some(434));
        for n in 20..=EXACT_MAX_PAIRS {
            let (exact, approx) = (exact_critical_k(n).unwrap(), normal_critical_k(n).unwrap());
            assert!(exact.abs_diff(approx) <= 1, "n = {n}: {exact} vs {approx}");
        }
        // Above 50 the approximation is what is used.
        assert_eq!(critical_k(51), normal_critical_k(51));
        assert_eq!(critical_k(50), exact_critical_k(50));
    }

    /// Differences 1..6: the 21 Walsh averages are (i + j)/2 for i ≤ j; their sums i + j count
    /// 1, 1, 2, 2, 3, 3, 3, 2, 2, 1, 1 for 2..12, so the 11th (the median) has sum 7: 3.5.
    /// n = 6 gives k = 1: the interval spans the smallest and largest average, [1, 6].
    /// Differences 1..10: 55 averages, median 5.5; k = 9, and the sums 2..6 count 1, 1, 2, 2, 3
    /// (cumulative 9), so the 9th smallest is 6/2 = 3 and by symmetry the 9th largest 16/2 = 8.
    #[test]
    fn hodges_lehmann_and_the_interval_on_hand_computable_samples() {
        assert_eq!(shift(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), (3.5, 1.0, 6.0));
        assert_eq!(shift(&[4.0, 6.0, 1.0, 5.0, 3.0, 2.0]), (3.5, 1.0, 6.0));
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(shift(&ten), (5.5, 3.0, 8.0));
        assert!(signed_rank_shift(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_none());
    }

    /// Zeros leave the ranking (k from the non-zero count) but keep their Walsh averages.
    #[test]
    fn zero_differences_leave_the_ranking_but_not_the_walsh_averages() {
        // 0..6: six non-zero differences, k = 1 of 28 averages: [0, 6]; the median is 3.
        assert_eq!(shift(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), (3.0, 0.0, 6.0));
        assert_eq!(shift(&[0.0; 8]), (0.0, 0.0, 0.0));
        // Eight pairs, two with a difference: too few signs to tell.
        let mostly_zero = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.01, 0.02];
        assert!(signed_rank_shift(&mostly_zero).is_none());
        assert!(signed_rank_shift(&[0.0; 5]).is_none());
    }

    #[test]
    fn a_ten_percent_shift_is_regressed_under_a_five_percent_rule() {
        let p50 = rule(Metric::Latency, "p(50) +5% floor 50us");
        let mut rng = fastrand::Rng::with_seed(1);
        let pairs = latency_pairs(&mut rng, 20, 1.10, 0.03);
        let (b, c) = whole(&pairs);
        let v = judge_paired(&p50, &side(b, 0.0, 100.0), &side(c, 0.0, 100.0), &pairs);
        assert_eq!(v.verdict, RuleState::Regressed, "{}", v.reason);
        let [low, high] = v.relative_change_ci.unwrap();
        assert!(low < 0.10 && 0.10 < high && low > 0.05, "[{low}, {high}]");
        let [cl, ch] = v.change_ci.unwrap();
        let base = v.baseline.unwrap();
        assert!((cl - low * base).abs() < 1e-6 && (ch - high * base).abs() < 1e-6);
        assert_eq!(v.samples, [20, 20]);
        assert!(
            v.reason
                .contains("paired: Wilcoxon signed-rank interval over 20 epoch pairs"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("Hodges-Lehmann shift +"), "{}", v.reason);
    }

    #[test]
    fn a_a_pairs_with_noise_are_unchanged() {
        let p50 = rule(Metric::Latency, "p(50) +5% floor 50us");
        let mut rng = fastrand::Rng::with_seed(2);
        let pairs = latency_pairs(&mut rng, 20, 1.0, 0.03);
        let (b, _) = whole(&pairs);
        // A whole-run change of +3% (above the floor, within the allowed 5%) so that the
        // interval decides.
        let v = judge_paired(
            &p50,
            &side(b, 0.0, 100.0),
            &side(b * 1.03, 0.0, 100.0),
            &pairs,
        );
        assert_eq!(v.verdict, RuleState::Unchanged, "{}", v.reason);
        assert!(v.reason.starts_with("within the allowed"), "{}", v.reason);
        let [low, high] = v.relative_change_ci.unwrap();
        assert!(
            low < 0.0 && 0.0 < high && high - low < 0.06,
            "[{low}, {high}]"
        );
    }

    /// Symmetric noise, no shift: the 95% interval holds 0 in 1 − 2 × P(T⁺ ≤ 52) = 95.2% of
    /// 20-pair samples. Over 1,000 samples that is 95.2% ± 0.7% (one standard deviation):
    /// a wrong rank (k = 1: ~100%; k from a 10% test: ~90%) falls outside 93–97%.
    #[test]
    fn intervals_cover_zero_in_95_percent_of_a_a_samples() {
        let p50 = rule(Metric::Latency, "p(50) +5%");
        let mut rng = fastrand::Rng::with_seed(3);
        let trials = 1_000;
        let covered = (0..trials)
            .filter(|_| {
                let pairs = latency_pairs(&mut rng, 20, 1.0, 0.05);
                let s = signed_rank_shift(&differences(&p50, &pairs).values).unwrap();
                s.low <= 0.0 && 0.0 <= s.high
            })
            .count();
        let rate = covered as f64 / trials as f64;
        assert!((0.93..=0.97).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn a_throughput_drop_is_regressed() {
        let rps = rule(Metric::Responses, "rate -10%");
        let mut rng = fastrand::Rng::with_seed(4);
        let pairs = latency_pairs(&mut rng, 12, 0.8, 0.02);
        let (b, c) = whole(&pairs);
        let v = judge_paired(&rps, &side(1.0, 0.0, b), &side(1.0, 0.0, c), &pairs);
        assert_eq!(v.verdict, RuleState::Regressed, "{}", v.reason);
        let [low, high] = v.relative_change_ci.unwrap();
        assert!(
            low < -0.2 + 0.03 && high > -0.2 - 0.03 && high < -0.1,
            "[{low}, {high}]"
        );
    }

    #[test]
    fn identical_error_rates_are_unchanged() {
        let errors = rule(Metric::Errors, "rate +10% floor 0.1%");
        let pairs: Vec<(f64, f64)> = (0..20)
            .map(|i| (i as f64 * 0.001, i as f64 * 0.001))
            .collect();
        let v = judge_paired(
            &errors,
            &side(1.0, 0.01, 1.0),
            &side(1.0, 0.01, 1.0),
            &pairs,
        );
        assert_eq!(v.verdict, RuleState::Unchanged, "{}", v.reason);
        assert_eq!(v.change_ci, Some([0.0, 0.0]));
    }

    #[test]
    fn a_large_error_increase_is_regressed() {
        let errors = rule(Metric::Errors, "rate +10% floor 0.1%");
        let mut rng = fastrand::Rng::with_seed(5);
        let pairs: Vec<(f64, f64)> = (0..20)
            .map(|_| (0.002 * rng.f64(), 0.05 + 0.01 * normal(&mut rng)))
            .collect();
        let v = judge_paired(
            &errors,
            &side(1.0, 0.001, 1.0),
            &side(1.0, 0.05, 1.0),
            &pairs,
        );
        assert_eq!(v.verdict, RuleState::Regressed, "{}", v.reason);
        let [low, high] = v.change_ci.unwrap();
        assert!(low > 0.04 && high < 0.06, "[{low}, {high}]");
        assert!(
            v.reason.contains("Hodges-Lehmann shift +4."),
            "{}",
            v.reason
        );
    }

    #[test]
    fn too_few_pairs_are_inconclusive_and_say_how_many_are_needed() {
        let p50 = rule(Metric::Latency, "p(50) +5% floor 50us");
        // Six epochs, one with no latency on a side: five usable, six needed.
        let pairs = [(2000.0, 2400.0), (2100.0, 2500.0), (0.0, 2400.0)]
            .into_iter()
            .chain([(1900.0, 2300.0); 3])
            .collect::<Vec<_>>();
        let v = judge_paired(
            &p50,
            &side(2000.0, 0.0, 1.0),
            &side(2400.0, 0.0, 1.0),
            &pairs,
        );
        assert_eq!(v.verdict, RuleState::Inconclusive);
        assert_eq!(v.change_ci, None);
        assert_eq!(v.samples, [5, 5]);
        assert_eq!(
            v.reason,
            "too few for a 95% Wilcoxon signed-rank interval: 5 epoch pairs (1 left out: a \
             side's value not positive); 6 with a difference needed: run longer"
        );
        // Within the floor, the floor decides; the reason still names the shortfall.
        let v = judge_paired(
            &p50,
            &side(2000.0, 0.0, 1.0),
            &side(2010.0, 0.0, 1.0),
            &pairs,
        );
        assert_eq!(v.verdict, RuleState::Unchanged);
        assert!(v.reason.contains("floor") && v.reason.contains("6 with a difference needed"));
    }
}
