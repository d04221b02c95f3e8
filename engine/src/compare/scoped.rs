//! Regression rules of a target or a flow (`RuleScope::Target`, `RuleScope::Flow`): the values
//! they compare, and the interval of the change.
//!
//! A target or a flow has no per-second series (only the whole run has one), so the interval
//! of a scoped rule's change is computed from its whole-run counts and histograms, taking its
//! requests (a flow's iterations) as independent samples, at 95% (z = 1.96):
//!
//! - a latency percentile `q`: each run's distribution-free interval of the quantile, the values
//!   at the ranks `n·q ± z·√(n·q·(1−q))` of its histogram (the normal approximation of the
//!   binomial order-statistic interval, Conover, *Practical Nonparametric Statistics*, 3.2);
//!   the change's interval is `[c_low − b_high, c_high − b_low]`;
//! - the mean: `(c − b) ± z·√(s_b²/n_b + s_c²/n_c)` (Welch), `s` the recorded standard deviation;
//! - the error rate: `(p_c − p_b) ± z·√(p_b(1−p_b)/n_b + p_c(1−p_c)/n_c)` (Wald);
//! - throughput (`N` responses, or iterations, over `T` seconds): `N_c/T_c − N_b/T_b ±
//!   z·√(N_b/T_b² + N_c/T_c²)` (Poisson counts).
//!
//! Requests close in time are correlated, so these intervals are narrower than the whole run's
//! block bootstrap would give; the floor and the whole-run change still have to agree for a
//! regression (`rules::judge`).

use std::borrow::Cow;

use super::stats::{Interval, MIN_SAMPLES};
use crate::plan::regression::{RegressionRule, RuleScope};
use crate::plan::threshold::{Aggregation, Metric};
use crate::result::{RunResult, TargetResult, decode_histogram};

/// The two-sided 95% quantile of the standard normal distribution.
const Z_95: f64 = 1.959_964;

/// What a rule of `scope` is judged on in `result`: the whole run (`total`), a target, or a
/// flow's iterations in a target's shape; `None` when `result` has no such target or flow.
pub(crate) fn scoped<'a>(
    scope: &RuleScope,
    result: &'a RunResult,
) -> Option<Cow<'a, TargetResult>> {
    match scope {
        RuleScope::Total => Some(Cow::Borrowed(&result.total)),
        RuleScope::Target(name) => result
            .targets
            .iter()
            .find(|t| &t.name == name)
            .map(Cow::Borrowed),
        RuleScope::Flow(name) => result
            .flows
            .iter()
            .find(|f| &f.name == name)
            .map(|f| Cow::Owned(f.as_target())),
    }
}

/// The 95% interval of a scoped rule's change `current − baseline` in the rule's unit (see
/// the module documentation), and the samples (requests or iterations) of each side;
/// `durations_s` are the two runs' measured windows. No interval when a side has fewer than
/// `MIN_SAMPLES` samples or its histogram does not decode.
pub(super) fn independent_interval(
    rule: &RegressionRule,
    b: &TargetResult,
    c: &TargetResult,
    durations_s: [f64; 2],
) -> (Option<Interval>, [usize; 2]) {
    let counts = match rule.metric {
        Metric::Errors => [b.requests, c.requests],
        _ => [b.responses, c.responses],
    };
    let samples = counts.map(|n| n as usize);
    if samples.iter().any(|n| *n < MIN_SAMPLES) {
        return (None, samples);
    }
    let [nb, nc] = counts.map(|n| n as f64);
    let interval = match (rule.metric, rule.aggregation) {
        (Metric::Latency, Aggregation::Mean) => {
            let (lb, lc) = (b.latency_us.as_ref(), c.latency_us.as_ref());
            lb.zip(lc).map(|(lb, lc)| {
                let half = Z_95 * (lb.stdev_us.powi(2) / nb + lc.stdev_us.powi(2) / nc).sqrt();
                around(lc.mean_us - lb.mean_us, half)
            })
        }
        (Metric::Latency, aggregation) => {
            let q = match aggregation {
                Aggregation::Percentile(p) => p / 100.0,
                _ => 0.5,
            };
            quantile_interval(&b.histogram, q)
                .zip(quantile_interval(&c.histogram, q))
                .map(|((b_low, b_high), (c_low, c_high))| Interval {
                    low: c_low - b_high,
                    high: c_high - b_low,
                })
        }
        (Metric::Errors, _) => {
            let (pb, pc) = (b.errors as f64 / nb, c.errors as f64 / nc);
            let half = Z_95 * (pb * (1.0 - pb) / nb + pc * (1.0 - pc) / nc).sqrt();
            Some(around(pc - pb, half))
        }
        (Metric::Responses, _) => {
            let [tb, tc] = durations_s;
            (tb > 0.0 && tc > 0.0).then(|| {
                let half = Z_95 * (nb / (tb * tb) + nc / (tc * tc)).sqrt();
                around(nc / tc - nb / tb, half)
            })
        }
        (Metric::Checks, _) => None,
    };
    (interval, samples)
}

fn around(centre: f64, half: f64) -> Interval {
    Interval {
        low: centre - half,
        high: centre + half,
    }
}

/// The 95% interval `(low, high)` of quantile `q` of an encoded histogram, µs.
fn quantile_interval(histogram: &str, q: f64) -> Option<(f64, f64)> {
    let h = decode_histogram(histogram).ok()?;
    let n = h.len() as f64;
    if n == 0.0 {
        return None;
    }
    let half = Z_95 * (n * q * (1.0 - q)).sqrt();
    let at = |rank: f64| h.value_at_quantile((rank / n).clamp(0.0, 1.0)) as f64;
    Some((at(n * q - half), at(n * q + half)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency_histogram;
    use crate::result::encode_histogram;

    fn histogram(values: impl Iterator<Item = u64>) -> String {
        let mut h = latency_histogram();
        for v in values {
            h.record(v).unwrap();
        }
        encode_histogram(&h)
    }

    #[test]
    fn a_quantiles_interval_holds_the_quantile_and_narrows_with_more_samples() {
        let small = histogram(1..=100);
        let large = histogram((1..=10_000).map(|v| v / 100 + 1));
        let (lo, hi) = quantile_interval(&small, 0.5).unwrap();
        assert!(lo < 50.0 && hi > 50.0, "{lo}..{hi}");
        // 100 samples: ranks 50 ± 9.8.
        assert!(
            (40.0..=41.0).contains(&lo) && (59.0..=60.0).contains(&hi),
            "{lo}..{hi}"
        );
        let (lo, hi) = quantile_interval(&large, 0.5).unwrap();
        assert!(hi - lo <= 2.0, "{lo}..{hi}");
    }

    fn flow(iterations: u64, failed: u64, duration_s: f64) -> TargetResult {
        crate::result::FlowResult {
            name: "shop".into(),
            weight: 1,
            steps: Vec::new(),
            iterations,
            passed: iterations - failed,
            failed,
            iterations_per_s: iterations as f64 / duration_s,
            failed_by_reason: Default::default(),
            failed_requests_by_kind: Default::default(),
            duration_us: None,
            histogram: histogram(1..=iterations),
        }
        .as_target()
    }

    #[test]
    fn error_rate_and_throughput_intervals_are_wald_and_poisson() {
        let rule = |metric, text| RegressionRule::parse(metric, text).unwrap();
        // 1% of 10,000 -> 2% of 10,000: change 0.01, half-width 1.96 × √(0.0099 + 0.0196)/100.
        let errors = rule(Metric::Errors, "rate +10%");
        let (i, n) = independent_interval(
            &errors,
            &flow(10_000, 100, 10.0),
            &flow(10_000, 200, 10.0),
            [10.0, 10.0],
        );
        let half = Z_95 * (0.01f64 * 0.99 / 1e4 + 0.02 * 0.98 / 1e4).sqrt();
        let i = i.unwrap();
        assert!((i.low - (0.01 - half)).abs() < 1e-12 && (i.high - (0.01 + half)).abs() < 1e-12);
        assert_eq!(n, [10_000, 10_000]);
        // 1,000 over 10 s -> 900 over 10 s: -10/s ± 1.96 × √(1000 + 900)/10.
        let requests = rule(Metric::Responses, "rate -10%");
        let (i, _) = independent_interval(
            &requests,
            &flow(1_000, 0, 10.0),
            &flow(900, 0, 10.0),
            [10.0, 10.0],
        );
        let half = Z_95 * 1_900f64.sqrt() / 10.0;
        let i = i.unwrap();
        assert!((i.low - (-10.0 - half)).abs() < 1e-9 && (i.high - (-10.0 + half)).abs() < 1e-9);
        // Too few samples: no interval.
        let (i, n) = independent_interval(
            &requests,
            &flow(2, 0, 1.0),
            &flow(900, 0, 10.0),
            [1.0, 10.0],
        );
        assert!(i.is_none());
        assert_eq!(n, [2, 900]);
    }
}
